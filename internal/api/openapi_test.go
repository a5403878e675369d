package api_test

import (
	"encoding/json"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/testenv"
)

// TestOpenAPIMatchesRoutes: the published document (hand-written
// fragments) and the routes the code registers are the same set, and the
// document served at /openapi.json is that document.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	e := testenv.New(t, testenv.Options{})
	resp, err := http.Get(e.Server.URL + "/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc struct {
		OpenAPI string                                `json:"openapi"`
		Paths   map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.") {
		t.Fatalf("openapi = %q", doc.OpenAPI)
	}
	var documented []string
	for p, ops := range doc.Paths {
		for m := range ops {
			documented = append(documented, strings.ToUpper(m)+" "+p)
		}
	}
	srv := api.New(api.Options{Manager: e.Manager})
	served := srv.Routes()
	sort.Strings(documented)
	sort.Strings(served)
	if d := cmp.Diff(documented, served); d != "" {
		t.Fatalf("OpenAPI document and served routes differ (-documented +served):\n%s", d)
	}
}

// TestOpenAPIExact: the document is exact enough to generate clients from
// (sdk/codegen does): every operation has a unique operationId; every JSON
// body, request or answer, is a named schema; every object schema declares
// its properties and whether others may appear; required fields exist; every
// $ref resolves; every error answer has the error shape.
func TestOpenAPIExact(t *testing.T) {
	b, err := api.OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Components map[string]map[string]json.RawMessage `json:"components"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	type schema struct {
		Ref                  string             `json:"$ref"`
		Type                 any                `json:"type"`
		Properties           map[string]*schema `json:"properties"`
		Required             []string           `json:"required"`
		AdditionalProperties json.RawMessage    `json:"additionalProperties"`
		Items                *schema            `json:"items"`
	}
	type media struct {
		Schema *schema `json:"schema"`
	}
	type response struct {
		Ref     string           `json:"$ref"`
		Content map[string]media `json:"content"`
	}
	type operation struct {
		OperationID string `json:"operationId"`
		RequestBody *struct {
			Content map[string]media `json:"content"`
		} `json:"requestBody"`
		Responses map[string]response `json:"responses"`
	}
	refs := map[string]bool{}
	for section, items := range doc.Components {
		for name := range items {
			refs["#/components/"+section+"/"+name] = true
		}
	}
	var check func(where string, s *schema)
	check = func(where string, s *schema) {
		if s == nil {
			return
		}
		if s.Ref != "" {
			if !refs[s.Ref] {
				t.Errorf("%s: $ref %s does not resolve", where, s.Ref)
			}
			return
		}
		if s.Type == "object" && s.Properties != nil {
			if len(s.AdditionalProperties) == 0 {
				t.Errorf("%s: object schema does not say whether other fields may appear (additionalProperties)", where)
			}
			for _, r := range s.Required {
				if _, ok := s.Properties[r]; !ok {
					t.Errorf("%s: required field %q is not a property", where, r)
				}
			}
		}
		for k, p := range s.Properties {
			check(where+"."+k, p)
		}
		check(where+"[]", s.Items)
		if len(s.AdditionalProperties) > 0 && s.AdditionalProperties[0] == '{' {
			var ap schema
			if err := json.Unmarshal(s.AdditionalProperties, &ap); err == nil {
				check(where+"{}", &ap)
			}
		}
	}
	for name, raw := range doc.Components["schemas"] {
		var s schema
		if err := json.Unmarshal(raw, &s); err != nil {
			t.Fatalf("schema %s: %v", name, err)
		}
		check("components.schemas."+name, &s)
	}
	ids := map[string]string{}
	for p, ops := range doc.Paths {
		for m, raw := range ops {
			var op operation
			if err := json.Unmarshal(raw, &op); err != nil {
				t.Fatalf("%s %s: %v", m, p, err)
			}
			where := strings.ToUpper(m) + " " + p
			if op.OperationID == "" {
				t.Errorf("%s: no operationId", where)
			} else if other, dup := ids[op.OperationID]; dup {
				t.Errorf("%s: operationId %s also names %s", where, op.OperationID, other)
			}
			ids[op.OperationID] = where
			named := func(what string, c map[string]media) {
				for ct, md := range c {
					if strings.Contains(ct, "json") && !strings.HasSuffix(p, "/json/version") && !strings.HasSuffix(p, "/json/version/") &&
						!strings.HasSuffix(p, "/json/list") && !strings.HasSuffix(p, "/json/list/") && (md.Schema == nil || md.Schema.Ref == "") {
						t.Errorf("%s: %s %s is not a named schema", where, what, ct)
					}
					check(where+" "+what, md.Schema)
				}
			}
			if op.RequestBody != nil {
				named("request", op.RequestBody.Content)
			}
			if _, ok := op.Responses["default"]; !ok && !strings.Contains(p, "{path...}") {
				t.Errorf("%s: no default (error) answer", where)
			}
			for code, r := range op.Responses {
				named("answer "+code, r.Content)
				if code >= "400" && code != "default" && r.Ref != "#/components/responses/Error" {
					md, ok := r.Content["application/json"]
					if !ok || md.Schema == nil || md.Schema.Ref != "#/components/schemas/Error" {
						t.Errorf("%s: answer %s is not the error shape", where, code)
					}
				}
			}
		}
	}
}
