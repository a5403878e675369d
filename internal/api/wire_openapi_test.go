package api_test

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/wire"
)

// The REST API's JSON is package wire's: every field of a representative
// value of each wire type (every field set, so that omitempty hides
// nothing) is in its OpenAPI schema, with the type the schema says, and
// the JSON decodes into the same value again (a round trip). A field
// added to wire without documenting it, or renamed, fails here.
func TestWireMatchesOpenAPI(t *testing.T) {
	raw, err := api.OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Components struct {
			Schemas map[string]map[string]any `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	schemas := doc.Components.Schemas
	for _, tc := range []struct {
		schema string
		value  any
	}{
		{"Sandbox", &wire.Sandbox{}},
		{"Spec", &wire.Spec{}},
		{"Network", &wire.Network{}},
		{"InjectRule", &wire.InjectRule{}},
		{"Stats", &wire.Stats{}},
		{"Template", &wire.Template{}},
		{"TemplateSource", &wire.TemplateSource{}},
		{"TemplateDefaults", &wire.TemplateDefaults{}},
		{"TemplatePullRequest", &wire.TemplatePullRequest{}},
		{"TemplatePushRequest", &wire.TemplatePushRequest{}},
		{"TemplateEvent", &wire.TemplateEvent{}},
		{"ExecRequest", &wire.ExecRequest{}},
		{"ExecResponse", &wire.ExecResponse{}},
		{"Error", &wire.ErrorBody{}},
		{"FileInfo", &wire.FileInfo{}},
		{"ListResult", &wire.ListResult{}},
		{"LinesResult", &wire.LinesResult{}},
		{"RemoveResult", &wire.RemoveResult{}},
		{"MkdirRequest", &wire.MkdirRequest{}},
		{"MoveRequest", &wire.MoveRequest{}},
		{"EditRequest", &wire.EditRequest{}},
		{"EditResult", &wire.EditResult{}},
		{"FindResult", &wire.FindResult{}},
		{"SearchResult", &wire.SearchResult{}},
		{"ExtractResult", &wire.ExtractResult{}},
		{"FileEvent", &wire.FileEvent{}},
		{"PTYSize", &wire.PTYSize{}},
		{"ProcessRequest", &wire.ProcessRequest{}},
		{"ProcessInfo", &wire.ProcessInfo{}},
		{"OutputLine", &wire.OutputLine{}},
		{"APIKeyRequest", &wire.KeyRequest{}},
		{"APIKey", &wire.KeyInfo{}},
		{"APIKeyCreated", &wire.CreatedKey{}},
		{"TenantQuotas", &wire.Quotas{}},
		{"Tenant", &wire.Tenant{}},
		{"SandboxTokenRequest", &wire.TokenRequest{}},
		{"SandboxToken", &wire.Token{}},
		{"AuditRecord", &wire.AuditRecord{}},
		{"AuditPage", &wire.AuditPage{}},
		{"SecretInfo", &wire.SecretInfo{}},
		{"SecretValue", &wire.SecretValue{}},
		{"PortURLRequest", &wire.PortURLRequest{}},
		{"PortURL", &wire.PortURL{}},
		{"BrowserStatus", &wire.BrowserStatus{}},
		{"BrowserPage", &wire.BrowserPage{}},
		{"BrowserTabs", &wire.BrowserTabs{}},
		{"CodeExecuteRequest", &wire.CodeExecuteRequest{}},
		{"CodeContextRequest", &wire.CodeContextRequest{}},
		{"CodeContext", &wire.CodeContext{}},
		{"CodeContextList", &wire.CodeContextList{}},
		{"CodeEvent", &wire.CodeEvent{}},
		{"CodeExecution", &wire.CodeExecution{}},
		{"Snapshot", &wire.Snapshot{}},
		{"CreateSnapshotRequest", &wire.CreateSnapshotRequest{}},
		{"SnapshotList", &wire.SnapshotList{}},
		{"ForkRequest", &wire.ForkRequest{}},
		{"ForkResponse", &wire.ForkResponse{}},
	} {
		t.Run(tc.schema, func(t *testing.T) {
			s, ok := schemas[tc.schema]
			if !ok {
				t.Fatalf("no schema %s", tc.schema)
			}
			fill(reflect.ValueOf(tc.value).Elem(), 0)
			if page, ok := tc.value.(*wire.AuditPage); ok {
				// Records are stored lines: records as they are stored.
				var r wire.AuditRecord
				fill(reflect.ValueOf(&r).Elem(), 0)
				line, _ := json.Marshal(r)
				page.Records = []json.RawMessage{line}
			}
			b, err := json.Marshal(tc.value)
			if err != nil {
				t.Fatal(err)
			}
			var v any
			if err := json.Unmarshal(b, &v); err != nil {
				t.Fatal(err)
			}
			for _, p := range validate(schemas, s, v, tc.schema) {
				t.Error(p)
			}
			// Round trip: what the schema describes decodes into the
			// same value.
			back := reflect.New(reflect.TypeOf(tc.value).Elem())
			if err := json.Unmarshal(b, back.Interface()); err != nil {
				t.Fatal(err)
			}
			b2, _ := json.Marshal(back.Interface())
			if string(b) != string(b2) {
				t.Errorf("round trip changed it:\n%s\n%s", b, b2)
			}
		})
	}
}

// The check sees a field the document lacks and a wrong type.
func TestWireSchemaCheckSees(t *testing.T) {
	raw, _ := api.OpenAPI()
	var doc struct {
		Components struct {
			Schemas map[string]map[string]any `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	bad := map[string]any{"id": "x", "surprise": 1, "created_at": 5.0}
	if p := validate(doc.Components.Schemas, doc.Components.Schemas["Sandbox"], bad, "Sandbox"); len(p) != 2 {
		t.Fatalf("problems %v, want the undocumented field and the wrong type", p)
	}
}

// fill sets every field of v to a non-zero value of its type.
func fill(v reflect.Value, depth int) {
	if depth > 4 {
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64, reflect.Int32, reflect.Int16, reflect.Int8:
		if v.Type() == reflect.TypeOf(time.Duration(0)) {
			v.SetInt(int64(time.Second))
			return
		}
		v.SetInt(7)
	case reflect.Uint, reflect.Uint64, reflect.Uint32, reflect.Uint16, reflect.Uint8:
		v.SetUint(7)
	case reflect.Float64, reflect.Float32:
		v.SetFloat(1.5)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), depth+1)
	case reflect.Slice:
		if v.Type() == reflect.TypeOf(json.RawMessage(nil)) {
			v.SetBytes([]byte(`{"k":1}`))
			return
		}
		s := reflect.MakeSlice(v.Type(), 1, 1)
		fill(s.Index(0), depth+1)
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k := reflect.New(v.Type().Key()).Elem()
		fill(k, depth+1)
		e := reflect.New(v.Type().Elem()).Elem()
		fill(e, depth+1)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Struct:
		if v.Type() == reflect.TypeOf(time.Time{}) {
			v.Set(reflect.ValueOf(time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)))
			return
		}
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), depth+1)
			}
		}
	}
}

// validate checks v against schema s (the subset of JSON Schema the
// document uses: type, properties, additionalProperties, items, $ref,
// allOf, enum) and returns the problems.
func validate(all map[string]map[string]any, s map[string]any, v any, at string) []string {
	if ref, ok := s["$ref"].(string); ok {
		name := strings.TrimPrefix(ref, "#/components/schemas/")
		rs, ok := all[name]
		if !ok {
			return []string{at + ": dangling " + ref}
		}
		return validate(all, rs, v, at)
	}
	var out []string
	if parts, ok := s["allOf"].([]any); ok {
		props := map[string]any{}
		for _, p := range parts {
			ps, _ := p.(map[string]any)
			if ref, ok := ps["$ref"].(string); ok {
				ps = all[strings.TrimPrefix(ref, "#/components/schemas/")]
			}
			pp, _ := ps["properties"].(map[string]any)
			for k, x := range pp {
				props[k] = x
			}
		}
		return validate(all, map[string]any{"type": "object", "properties": props, "additionalProperties": false}, v, at)
	}
	if enum, ok := s["enum"].([]any); ok {
		_ = enum // representative values are not from the enums
	}
	types := map[string]bool{}
	switch t := s["type"].(type) {
	case string:
		types[t] = true
	case []any:
		for _, x := range t {
			types[fmt.Sprint(x)] = true
		}
	}
	if len(types) == 0 {
		return nil // anything
	}
	switch x := v.(type) {
	case nil:
		if !types["null"] {
			out = append(out, at+": null")
		}
	case string:
		if !types["string"] {
			out = append(out, at+": a string, schema says "+fmt.Sprint(s["type"]))
		}
	case bool:
		if !types["boolean"] {
			out = append(out, at+": a boolean, schema says "+fmt.Sprint(s["type"]))
		}
	case float64:
		if !types["number"] && !(types["integer"] && x == float64(int64(x))) {
			out = append(out, at+": a number, schema says "+fmt.Sprint(s["type"]))
		}
	case []any:
		if !types["array"] {
			out = append(out, at+": an array, schema says "+fmt.Sprint(s["type"]))
			break
		}
		if items, ok := s["items"].(map[string]any); ok {
			for i, e := range x {
				out = append(out, validate(all, items, e, fmt.Sprintf("%s[%d]", at, i))...)
			}
		}
	case map[string]any:
		if !types["object"] {
			out = append(out, at+": an object, schema says "+fmt.Sprint(s["type"]))
			break
		}
		props, _ := s["properties"].(map[string]any)
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			ps, ok := props[k].(map[string]any)
			if !ok {
				if ap, ok := s["additionalProperties"].(map[string]any); ok {
					out = append(out, validate(all, ap, x[k], at+"."+k)...)
				} else if len(props) > 0 && s["additionalProperties"] != true {
					out = append(out, at+"."+k+": not in the schema")
				}
				continue
			}
			out = append(out, validate(all, ps, x[k], at+"."+k)...)
		}
	}
	return out
}

// The error-code enum in the OpenAPI document is exactly the set of codes
// the server can send (internal/errs) and the clients know (package
// wire): a code added to one and not the others fails here, so a
// generated SDK never meets a code its enum rejects.
func TestOpenAPIErrorCodesAreWires(t *testing.T) {
	raw, err := api.OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Components struct {
			Schemas struct {
				ErrorDetail struct {
					Properties struct {
						Code struct {
							Enum []string `json:"enum"`
						} `json:"code"`
					} `json:"properties"`
				} `json:"ErrorDetail"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	enum := doc.Components.Schemas.ErrorDetail.Properties.Code.Enum
	sort.Strings(enum)
	for _, src := range []string{"../../wire/errors.go", "../errs/errs.go"} {
		got := codeConsts(t, src)
		if !reflect.DeepEqual(got, enum) {
			t.Errorf("%s declares codes %v; the OpenAPI ErrorDetail enum is %v", src, got, enum)
		}
	}
}

// codeConsts are the string values of the constants named Code… in a Go
// source file, sorted.
func codeConsts(t *testing.T, path string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			for i, n := range vs.Names {
				if !strings.HasPrefix(n.Name, "Code") || i >= len(vs.Values) {
					continue
				}
				if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					v, err := strconv.Unquote(lit.Value)
					if err != nil {
						t.Fatal(err)
					}
					out = append(out, v)
				}
			}
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s declares no Code constants: the test reads the wrong file", path)
	}
	sort.Strings(out)
	return out
}
