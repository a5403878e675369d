package api_test

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	neturl "net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/tenant"
	"github.com/paddockhq/paddock/internal/testenv"
)

// tnReply is an answer, reduced to what a caller can tell apart.
type tnReply struct {
	status  int
	code    string
	message string
	header  http.Header
	body    string
}

func (r tnReply) String() string { return fmt.Sprintf("%d %s %q", r.status, r.code, r.message) }

func (r tnReply) same(o tnReply) bool {
	return r.status == o.status && r.code == o.code && r.message == o.message
}

// tnSend makes one request with cred as the bearer credential. hdr are
// header pairs; "Host" sets the Host.
func tnSend(t *testing.T, base, method, path, cred, body string, hdr ...string) tnReply {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if cred != "" {
		req.Header.Set("Authorization", "Bearer "+cred)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i] == "Host" {
			req.Host = hdr[i+1]
			continue
		}
		req.Header.Set(hdr[i], hdr[i+1])
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	var b []byte
	// Error answers and JSON documents are read; streams (a watch, a
	// socket) are not waited for.
	if resp.StatusCode >= 300 || strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		b, _ = io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	}
	var eb api.ErrorBody
	_ = json.Unmarshal(b, &eb)
	return tnReply{status: resp.StatusCode, code: eb.Error.Code, message: eb.Error.Message, header: resp.Header, body: string(b)}
}

func tnTenant(t *testing.T, e *testenv.Env, name string, q tenant.Quotas) {
	t.Helper()
	if _, err := e.Auth.Tenants().Create(context.Background(), name, q); err != nil {
		t.Fatal(err)
	}
}

func tnKey(t *testing.T, e *testenv.Env, tenantName string, scopes ...auth.Scope) auth.CreatedKey {
	t.Helper()
	k, err := e.Auth.CreateKey(context.Background(), e.Scope, auth.KeyRequest{Tenant: tenantName, Scopes: scopes})
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func tnSandbox(t *testing.T, e *testenv.Env, cred, spec string) string {
	t.Helper()
	r := tnSend(t, e.Server.URL, "POST", "/v1/sandboxes", cred, spec)
	if r.status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	var sb struct{ ID string }
	_ = json.Unmarshal([]byte(r.body), &sb)
	return sb.ID
}

func tnToken(t *testing.T, e *testenv.Env, cred, id, body string) string {
	t.Helper()
	r := tnSend(t, e.Server.URL, "POST", "/v1/sandboxes/"+id+"/tokens", cred, body)
	if r.status != http.StatusCreated {
		t.Fatalf("mint token: %d %s", r.status, r.body)
	}
	var tok auth.Token
	_ = json.Unmarshal([]byte(r.body), &tok)
	return tok.Token
}

func tnMissingID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return "sb-" + base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding).EncodeToString(b[:])
}

// tnRoute is one served route that names a sandbox.
type tnRoute struct {
	method, pattern string
	query           string
	bodies          []string // candidates, most minimal first
}

var tnParamRE = regexp.MustCompile(`\{[A-Za-z_]+(\.\.\.)?\}`)

func (r tnRoute) path(id string) string {
	p := strings.Replace(r.pattern, "{id}", id, 1)
	return tnParamRE.ReplaceAllString(p, "1") + r.query
}

// tnRoutes lists every route the server registers under
// /v1/sandboxes/{id}, with a request body built from the OpenAPI document
// (its example, else the required fields of its schema), so that routes
// other engineers add later are covered without editing this test. The
// sandbox's own DELETE comes last.
func tnRoutes(t *testing.T, e *testenv.Env) []tnRoute {
	t.Helper()
	docBytes, err := api.OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(docBytes, &doc); err != nil {
		t.Fatal(err)
	}
	var out []tnRoute
	for _, rt := range api.New(api.Options{Manager: e.Manager}).Routes() {
		method, pattern, _ := strings.Cut(rt, " ")
		if !strings.HasPrefix(pattern, "/v1/sandboxes/{id}") {
			continue
		}
		bodies := tnExampleBodies(doc, method, pattern)
		if b, ok := tnKnownBodies[rt]; ok {
			bodies = append(bodies, b)
		}
		out = append(out, tnRoute{method: method, pattern: pattern, query: tnExampleQuery(doc, method, pattern), bodies: bodies})
	}
	sort.SliceStable(out, func(i, j int) bool {
		last := func(r tnRoute) bool { return r.method == "DELETE" && r.pattern == "/v1/sandboxes/{id}" }
		return !last(out[i]) && last(out[j])
	})
	if len(out) < 5 {
		t.Fatalf("only %d sandbox routes found: %v", len(out), out)
	}
	return out
}

// tnKnownBodies are valid bodies for routes whose schema alone does not
// yield one (fields that are alternatives). Better: an "example" on the
// route's OpenAPI requestBody, which is tried first.
var tnKnownBodies = map[string]string{
	"POST /v1/sandboxes/{id}/files/edit": `{"path":"/workspace/tenancy.txt","old_string":"a","new_string":"b"}`,
}

// tnExampleQuery gives every required (or exemplified) query parameter a
// value.
func tnExampleQuery(doc map[string]any, method, pattern string) string {
	params, _ := tnDig(doc, "paths", pattern, strings.ToLower(method), "parameters").([]any)
	q := neturl.Values{}
	for _, p := range params {
		pm, _ := p.(map[string]any)
		if ref, ok := pm["$ref"].(string); ok {
			pm, _ = tnDig(doc, strings.Split(strings.TrimPrefix(ref, "#/"), "/")...).(map[string]any)
		}
		if pm["in"] != "query" {
			continue
		}
		name, _ := pm["name"].(string)
		req, _ := pm["required"].(bool)
		ex, hasEx := pm["example"]
		if !req && !hasEx {
			continue
		}
		if !hasEx {
			ex = tnSynth(doc, pm["schema"], 0)
		}
		q.Set(name, fmt.Sprint(ex))
	}
	if len(q) == 0 {
		return ""
	}
	return "?" + q.Encode()
}

// tnExampleBodies are the request bodies to try: the operation's example,
// else a value with the schema's required fields, then one with all its
// top-level fields (for schemas that mark nothing required).
func tnExampleBodies(doc map[string]any, method, pattern string) []string {
	op := tnDig(doc, "paths", pattern, strings.ToLower(method))
	content, _ := tnDig(op, "requestBody", "content").(map[string]any)
	if content == nil {
		if method == "POST" || method == "PUT" || method == "PATCH" {
			return []string{"{}"}
		}
		return []string{""}
	}
	media, _ := content["application/json"].(map[string]any)
	if media == nil {
		return []string{"x"} // a raw body (stdin, file content)
	}
	if ex, ok := media["example"]; ok {
		b, _ := json.Marshal(ex)
		return []string{string(b)}
	}
	req, _ := json.Marshal(tnSynth(doc, media["schema"], 0))
	all, _ := json.Marshal(tnSynthAll(doc, media["schema"]))
	if string(all) == string(req) {
		return []string{string(req)}
	}
	return []string{string(req), string(all)}
}

// tnSynthAll is tnSynth with every top-level property of an object.
func tnSynthAll(doc map[string]any, schema any) any {
	s, _ := schema.(map[string]any)
	if ref, ok := s["$ref"].(string); ok {
		s, _ = tnDig(doc, strings.Split(strings.TrimPrefix(ref, "#/"), "/")...).(map[string]any)
	}
	props, _ := s["properties"].(map[string]any)
	if s["type"] != "object" || len(props) == 0 {
		return tnSynth(doc, s, 0)
	}
	out := map[string]any{}
	for name, p := range props {
		out[name] = tnSynth(doc, p, 1)
	}
	return out
}

// tnSynth makes a minimal value of a JSON schema: the required fields only.
func tnSynth(doc map[string]any, schema any, depth int) any {
	s, _ := schema.(map[string]any)
	if s == nil || depth > 8 {
		return nil
	}
	if ref, ok := s["$ref"].(string); ok {
		parts := strings.Split(strings.TrimPrefix(ref, "#/"), "/")
		var path []string
		path = append(path, parts...)
		return tnSynth(doc, tnDig(doc, path...), depth+1)
	}
	if ex, ok := s["example"]; ok {
		return ex
	}
	if all, ok := s["allOf"].([]any); ok && len(all) > 0 {
		return tnSynth(doc, all[0], depth+1)
	}
	if enum, ok := s["enum"].([]any); ok && len(enum) > 0 {
		return enum[0]
	}
	if d, ok := s["default"]; ok {
		return d
	}
	switch s["type"] {
	case "object":
		out := map[string]any{}
		props, _ := s["properties"].(map[string]any)
		req, _ := s["required"].([]any)
		for _, r := range req {
			name, _ := r.(string)
			out[name] = tnSynth(doc, props[name], depth+1)
		}
		return out
	case "array":
		return []any{tnSynth(doc, s["items"], depth+1)}
	case "string":
		return "x"
	case "integer", "number":
		return 600 // not 1: a timeout_s of 1 would end the sandbox mid-test
	case "boolean":
		return false
	}
	return map[string]any{}
}

func tnDig(v any, path ...string) any {
	for _, p := range path {
		m, _ := v.(map[string]any)
		if m == nil {
			return nil
		}
		v = m[p]
	}
	return v
}

// tnWSHeaders make a GET a WebSocket handshake; plain routes ignore them.
var tnWSHeaders = []string{"Connection", "Upgrade", "Upgrade", "websocket", "Sec-WebSocket-Version", "13",
	"Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="}

func tnHdrFor(method string) []string {
	if method == http.MethodGet {
		return tnWSHeaders
	}
	return nil
}

// TestCrossTenantEveryRoute: for every route that takes a sandbox id,
// another tenant's caller gets exactly the answer a nonexistent sandbox
// gets — a 404 — and so does a token bound to another sandbox of the same
// tenant; the owner (positive control) gets a different answer.
func TestCrossTenantEveryRoute(t *testing.T) {
	e := testenv.New(t, testenv.Options{})
	tnTenant(t, e, "acme", tenant.Quotas{})
	tnTenant(t, e, "globex", tenant.Quotas{})
	all := []auth.Scope{auth.ScopeRead, auth.ScopeWrite, auth.ScopeExec}
	keyA := tnKey(t, e, "acme", all...).Key
	keyB := tnKey(t, e, "globex", all...).Key
	sbA := tnSandbox(t, e, keyA, `{}`)
	sbA2 := tnSandbox(t, e, keyA, `{}`)
	tokA2 := tnToken(t, e, keyA, sbA2, `{"scopes":["read","write","exec"],"ttl_s":600}`)
	missing := tnMissingID()
	url := e.Server.URL
	norm := func(r tnReply, id string) tnReply { r.message = strings.ReplaceAll(r.message, id, "ID"); return r }

	routes := tnRoutes(t, e)
	for _, rt := range routes {
		name := rt.method + " " + rt.pattern
		hdr := tnHdrFor(rt.method)
		// The owner's answer must differ from a missing sandbox's (the
		// positive control); take the first candidate body for which it
		// does.
		var body string
		var aOwn, aMissing tnReply
		for i, b := range rt.bodies {
			aMissing = norm(tnSend(t, url, rt.method, rt.path(missing), keyA, b, hdr...), missing)
			aOwn = norm(tnSend(t, url, rt.method, rt.path(sbA), keyA, b, hdr...), sbA)
			if i == 0 || !aOwn.same(aMissing) {
				body = b
			}
			if !aOwn.same(aMissing) {
				break
			}
		}
		bMissing := norm(tnSend(t, url, rt.method, rt.path(missing), keyB, body, hdr...), missing)
		bOther := norm(tnSend(t, url, rt.method, rt.path(sbA), keyB, body, hdr...), sbA)
		if bOther.status != http.StatusNotFound {
			t.Errorf("%s: another tenant got %s, want 404 (a handler must look the sandbox up before validating the rest of the request, or its OpenAPI operation must carry a valid requestBody example)",
				name, bOther)
		}
		if !bOther.same(bMissing) {
			t.Errorf("%s: another tenant's sandbox answers %s, a missing one %s: they must be indistinguishable", name, bOther, bMissing)
		}
		tokOther := norm(tnSend(t, url, rt.method, rt.path(sbA), tokA2, body, hdr...), sbA)
		tokMissing := norm(tnSend(t, url, rt.method, rt.path(missing), tokA2, body, hdr...), missing)
		if tokOther.status != http.StatusNotFound || !tokOther.same(tokMissing) {
			t.Errorf("%s: a token for another sandbox got %s, a missing sandbox %s; want the same 404", name, tokOther, tokMissing)
		}
		if aOwn.same(aMissing) {
			t.Errorf("%s: positive control failed: the owner got the answer of a missing sandbox, %s (bodies tried: %q)", name, aOwn, rt.bodies)
		}
		t.Logf("%-45s other tenant %d %q, owner %d", name, bOther.status, bOther.code, aOwn.status)
	}
	t.Logf("%d sandbox routes checked", len(routes))
}

func TestSandboxTokens(t *testing.T) {
	e := testenv.New(t, testenv.Options{})
	url := e.Server.URL
	tnTenant(t, e, "acme", tenant.Quotas{})
	tnTenant(t, e, "globex", tenant.Quotas{})
	keyA := tnKey(t, e, "acme", auth.ScopeRead, auth.ScopeWrite, auth.ScopeExec)
	readOnly := tnKey(t, e, "acme", auth.ScopeRead)
	keyB := tnKey(t, e, "globex", auth.ScopeRead, auth.ScopeWrite, auth.ScopeExec)
	sbA := tnSandbox(t, e, keyA.Key, `{}`)
	sbA2 := tnSandbox(t, e, keyA.Key, `{}`)

	tok := tnToken(t, e, keyA.Key, sbA, `{"scopes":["read","exec"],"ttl_s":600}`)
	if r := tnSend(t, url, "GET", "/v1/sandboxes/"+sbA, tok, ""); r.status != 200 {
		t.Fatalf("token on its sandbox: %d %s", r.status, r.body)
	}
	if r := tnSend(t, url, "POST", "/v1/sandboxes/"+sbA+"/exec", tok, `{"cmd":["echo","hi"]}`); r.status != 200 || !strings.Contains(r.body, `"stdout":"hi\n"`) {
		t.Fatalf("token exec: %d %s", r.status, r.body)
	}
	if r := tnSend(t, url, "GET", "/v1/sandboxes", tok, ""); r.status != 200 || strings.Contains(r.body, sbA2) || !strings.Contains(r.body, sbA) {
		t.Fatalf("token list: %d %s", r.status, r.body)
	}
	// Sandbox A's token: 404 on sandbox B.
	if r := tnSend(t, url, "GET", "/v1/sandboxes/"+sbA2, tok, ""); r.status != 404 {
		t.Fatalf("token on another sandbox: %d", r.status)
	}
	// Scopes: no write in the token, so no delete.
	if r := tnSend(t, url, "DELETE", "/v1/sandboxes/"+sbA, tok, ""); r.status != 403 {
		t.Fatalf("token delete without write: %d", r.status)
	}
	// Even with write, a token creates nothing (403), manages no keys, and
	// mints no tokens.
	tokW := tnToken(t, e, keyA.Key, sbA, `{"scopes":["read","write"],"ttl_s":600}`)
	if r := tnSend(t, url, "POST", "/v1/sandboxes", tokW, `{}`); r.status != 403 {
		t.Fatalf("token create: %d %s", r.status, r.body)
	}
	for _, p := range []string{"/v1/keys", "/v1/tenants"} {
		if r := tnSend(t, url, "GET", p, tokW, ""); r.status != 403 {
			t.Fatalf("token %s: %d", p, r.status)
		}
	}
	if r := tnSend(t, url, "POST", "/v1/sandboxes/"+sbA+"/tokens", tokW, `{"scopes":["read"]}`); r.status != 403 {
		t.Fatalf("token minting a token: %d %s", r.status, r.body)
	}
	// Never more than the key: a read-only key cannot mint exec.
	if r := tnSend(t, url, "POST", "/v1/sandboxes/"+sbA+"/tokens", readOnly.Key, `{"scopes":["exec"]}`); r.status != 403 {
		t.Fatalf("read-only key minting exec: %d %s", r.status, r.body)
	}
	// Another tenant cannot mint for the sandbox (404, as for any route).
	if r := tnSend(t, url, "POST", "/v1/sandboxes/"+sbA+"/tokens", keyB.Key, `{"scopes":["read"]}`); r.status != 404 {
		t.Fatalf("cross-tenant mint: %d", r.status)
	}
	// Bad requests.
	for _, body := range []string{`{"scopes":[]}`, `{"scopes":["admin"]}`, `{"scopes":["read"],"ttl_s":90000}`, `{"scopes":["read"],"ttl_s":-1}`} {
		if r := tnSend(t, url, "POST", "/v1/sandboxes/"+sbA+"/tokens", keyA.Key, body); r.status != 400 {
			t.Fatalf("mint %s: %d %s", body, r.status, r.body)
		}
	}

	// An expired token: 401.
	short := tnSend(t, url, "POST", "/v1/sandboxes/"+sbA+"/tokens", keyA.Key, `{"scopes":["read"],"ttl_s":1}`)
	var st auth.Token
	_ = json.Unmarshal([]byte(short.body), &st)
	if r := tnSend(t, url, "GET", "/v1/sandboxes/"+sbA, st.Token, ""); r.status != 200 && time.Now().Before(st.ExpiresAt) {
		t.Fatalf("fresh short token: %d", r.status)
	}
	time.Sleep(time.Until(st.ExpiresAt) + 50*time.Millisecond)
	if r := tnSend(t, url, "GET", "/v1/sandboxes/"+sbA, st.Token, ""); r.status != 401 || r.header.Get("WWW-Authenticate") == "" {
		t.Fatalf("expired token: %d", r.status)
	}

	// Deleting the sandbox makes its tokens useless: 404.
	tok2 := tnToken(t, e, keyA.Key, sbA2, `{"scopes":["read","write","exec"],"ttl_s":600}`)
	if r := tnSend(t, url, "DELETE", "/v1/sandboxes/"+sbA2, keyA.Key, ""); r.status != 204 {
		t.Fatalf("delete: %d", r.status)
	}
	for _, m := range []string{"GET", "DELETE"} {
		if r := tnSend(t, url, m, "/v1/sandboxes/"+sbA2, tok2, ""); r.status != 404 {
			t.Fatalf("%s with the token of a deleted sandbox: %d", m, r.status)
		}
	}
	if r := tnSend(t, url, "POST", "/v1/sandboxes/"+sbA2+"/exec", tok2, `{"cmd":["true"]}`); r.status != 404 {
		t.Fatalf("exec with the token of a deleted sandbox: %d", r.status)
	}

	// Revoking the key: the key and its tokens answer 401.
	if r := tnSend(t, url, "DELETE", "/v1/keys/"+keyA.ID, e.AdminKey, ""); r.status != 204 {
		t.Fatalf("revoke: %d %s", r.status, r.body)
	}
	for _, cred := range []string{keyA.Key, tok} {
		if r := tnSend(t, url, "GET", "/v1/sandboxes/"+sbA, cred, ""); r.status != 401 {
			t.Fatalf("revoked credential: %d", r.status)
		}
	}
	// Positive control: the admin still reaches... nothing of acme's
	// (tenants are separate) but is served.
	if r := tnSend(t, url, "GET", "/v1/sandboxes", e.AdminKey, ""); r.status != 200 {
		t.Fatalf("admin after revocation: %d", r.status)
	}
}

func TestKeysAndTenantsAPI(t *testing.T) {
	e := testenv.New(t, testenv.Options{})
	url, admin := e.Server.URL, e.AdminKey
	if r := tnSend(t, url, "POST", "/v1/tenants", admin, `{"name":"acme","quotas":{"max_sandboxes":2}}`); r.status != 201 {
		t.Fatalf("create tenant: %d %s", r.status, r.body)
	}
	if r := tnSend(t, url, "POST", "/v1/tenants", admin, `{"name":"acme"}`); r.status != 409 {
		t.Fatalf("duplicate tenant: %d", r.status)
	}
	if r := tnSend(t, url, "POST", "/v1/tenants", admin, `{"name":"Bad Name"}`); r.status != 400 {
		t.Fatalf("bad tenant name: %d", r.status)
	}
	if r := tnSend(t, url, "POST", "/v1/tenants", admin, `{"name":"x","quotas":{"max_cpu":-1}}`); r.status != 400 || !strings.Contains(r.message, "max_cpu") {
		t.Fatalf("bad quota: %d %s", r.status, r.body)
	}
	r := tnSend(t, url, "POST", "/v1/keys", admin, `{"tenant":"acme","scopes":["read","write"],"name":"ci","format":"e2b","expires_in_s":3600}`)
	if r.status != 201 || r.header.Get("Cache-Control") != "no-store" {
		t.Fatalf("create key: %d %s", r.status, r.body)
	}
	var k auth.CreatedKey
	_ = json.Unmarshal([]byte(r.body), &k)
	if !regexp.MustCompile(`^e2b_[0-9a-f]{40}$`).MatchString(k.Key) || k.ExpiresAt == nil || k.Tenant != "acme" {
		t.Fatalf("key = %+v", k)
	}
	// The E2B-form key authenticates like any other.
	if r := tnSend(t, url, "GET", "/v1/sandboxes", k.Key, ""); r.status != 200 {
		t.Fatalf("e2b key: %d", r.status)
	}
	// Not an admin: key and tenant routes are refused.
	for _, rt := range [][2]string{{"GET", "/v1/keys"}, {"POST", "/v1/keys"}, {"GET", "/v1/tenants"}, {"GET", "/v1/tenants/acme"},
		{"PUT", "/v1/tenants/acme"}, {"POST", "/v1/tenants"}, {"DELETE", "/v1/keys/" + k.ID}} {
		if r := tnSend(t, url, rt[0], rt[1], k.Key, `{}`); r.status != 403 {
			t.Fatalf("%s %s with a non-admin key: %d", rt[0], rt[1], r.status)
		}
	}
	// The list never holds the key itself.
	r = tnSend(t, url, "GET", "/v1/keys?tenant=acme", admin, "")
	if r.status != 200 || strings.Contains(r.body, k.Key) || !strings.Contains(r.body, k.ID) || !strings.Contains(r.body, k.Hint) {
		t.Fatalf("list keys: %d %s", r.status, r.body)
	}
	for _, body := range []string{`{"tenant":"nope","scopes":["read"]}`, `{"tenant":"acme","scopes":["admin"]}`, `{"scopes":["read"]}`,
		`{"tenant":"acme","scopes":["read"],"expires_in_s":-5}`} {
		if r := tnSend(t, url, "POST", "/v1/keys", admin, body); r.status/100 != 4 {
			t.Fatalf("create key %s: %d", body, r.status)
		}
	}
	// Quotas: read, replace, with usage.
	r = tnSend(t, url, "PUT", "/v1/tenants/acme", admin, `{"quotas":{"max_sandboxes":5,"allowed_domains":["*.GitHub.com"]}}`)
	if r.status != 200 || !strings.Contains(r.body, `"max_sandboxes":5`) || !strings.Contains(r.body, `"*.github.com"`) || !strings.Contains(r.body, `"usage"`) {
		t.Fatalf("set quotas: %d %s", r.status, r.body)
	}
	if r := tnSend(t, url, "GET", "/v1/tenants/nope", admin, ""); r.status != 404 {
		t.Fatalf("missing tenant: %d", r.status)
	}
	if r := tnSend(t, url, "GET", "/v1/tenants", admin, ""); r.status != 200 || !strings.Contains(r.body, `"default"`) || !strings.Contains(r.body, `"acme"`) {
		t.Fatalf("list tenants: %d %s", r.status, r.body)
	}
	// Revoke: 204, then 401; unknown key 404.
	if r := tnSend(t, url, "DELETE", "/v1/keys/"+k.ID, admin, ""); r.status != 204 {
		t.Fatalf("revoke: %d", r.status)
	}
	if r := tnSend(t, url, "GET", "/v1/sandboxes", k.Key, ""); r.status != 401 {
		t.Fatalf("revoked key: %d", r.status)
	}
	if r := tnSend(t, url, "DELETE", "/v1/keys/key_nope", admin, ""); r.status != 404 {
		t.Fatalf("revoke unknown: %d", r.status)
	}
}

func TestQuotasOverREST(t *testing.T) {
	e := testenv.New(t, testenv.Options{})
	url := e.Server.URL
	scopes := []auth.Scope{auth.ScopeRead, auth.ScopeWrite, auth.ScopeExec}

	tnTenant(t, e, "small", tenant.Quotas{MaxSandboxes: 2, MaxMemoryMB: 256})
	small := tnKey(t, e, "small", scopes...).Key
	for range 2 {
		tnSandbox(t, e, small, `{"memory_mb":128}`)
	}
	r := tnSend(t, url, "POST", "/v1/sandboxes", small, `{"memory_mb":128}`)
	if r.status != 429 || r.code != "limit_exceeded" || !strings.Contains(r.message, "tenant small: sandbox quota 2 reached") {
		t.Fatalf("count quota: %d %s", r.status, r.body)
	}
	r = tnSend(t, url, "POST", "/v1/sandboxes", small, `{"memory_mb":512}`)
	if r.status != 403 || !strings.Contains(r.message, "tenant small: per-sandbox memory ceiling is 256 MiB (requested 512 MiB)") {
		t.Fatalf("memory ceiling: %d %s", r.status, r.body)
	}
	// A raised quota applies to the next create.
	if r := tnSend(t, url, "PUT", "/v1/tenants/small", e.AdminKey, `{"quotas":{"max_sandboxes":3,"max_memory_mb":256}}`); r.status != 200 {
		t.Fatalf("raise: %d %s", r.status, r.body)
	}
	tnSandbox(t, e, small, `{"memory_mb":128}`)
	if r := tnSend(t, url, "GET", "/v1/tenants/small", e.AdminKey, ""); !strings.Contains(r.body, `"usage":{"sandboxes":3,`) {
		t.Fatalf("usage: %s", r.body)
	}

	tnTenant(t, e, "mem", tenant.Quotas{MaxTotalMemoryMB: 300})
	mem := tnKey(t, e, "mem", scopes...).Key
	// disk_mb given: where layers are tmpfs it counts as memory too
	// (then "in use 240 MiB, requested 144 MiB: 128 memory + 16 disk...").
	tnSandbox(t, e, mem, `{"memory_mb":224,"disk_mb":16}`)
	r = tnSend(t, url, "POST", "/v1/sandboxes", mem, `{"memory_mb":128,"disk_mb":16}`)
	if r.status != 429 || !strings.HasPrefix(r.message, "tenant mem: memory quota 300 MiB would be exceeded (in use ") {
		t.Fatalf("memory quota: %d %s", r.status, r.body)
	}

	tnTenant(t, e, "rated", tenant.Quotas{CreatePerMinute: 2})
	rated := tnKey(t, e, "rated", scopes...).Key
	for range 2 {
		id := tnSandbox(t, e, rated, `{}`)
		tnSend(t, url, "DELETE", "/v1/sandboxes/"+id, rated, "")
	}
	r = tnSend(t, url, "POST", "/v1/sandboxes", rated, `{}`)
	ra, _ := strconv.Atoi(r.header.Get("Retry-After"))
	if r.status != 429 || r.code != "rate_limited" || ra < 1 || ra > 30 || !strings.Contains(r.message, "tenant rated: create rate quota of 2 per minute exceeded") {
		t.Fatalf("rate quota: %d Retry-After %q %s", r.status, r.header.Get("Retry-After"), r.body)
	}
	// Positive control: another tenant is not slowed by it.
	tnSandbox(t, e, mem, `{"memory_mb":32,"disk_mb":16}`)

	// Concurrent creates stop at the quota.
	tnTenant(t, e, "burst", tenant.Quotas{MaxSandboxes: 3})
	burst := tnKey(t, e, "burst", scopes...).Key
	var mu sync.Mutex
	codes := map[int]int{}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := tnSend(t, url, "POST", "/v1/sandboxes", burst, `{"memory_mb":64}`)
			mu.Lock()
			codes[r.status]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	if codes[201] != 3 || codes[429] != 5 {
		t.Fatalf("8 concurrent creates under a quota of 3: %v", codes)
	}
}

// TestHostAndOriginThroughTheStack: the middleware as wired in testenv
// (and serve) refuses a foreign Host and a cross-site Origin; the real
// host and same-origin requests work (positive controls).
func TestHostAndOriginThroughTheStack(t *testing.T) {
	e := testenv.New(t, testenv.Options{})
	url, key := e.Server.URL, e.AdminKey
	if r := tnSend(t, url, "GET", "/v1/sandboxes", key, "", "Host", "evil.example"); r.status != 403 {
		t.Fatalf("Host evil.example: %d", r.status)
	}
	if r := tnSend(t, url, "GET", "/v1/sandboxes", key, ""); r.status != 200 {
		t.Fatalf("real host: %d", r.status)
	}
	if r := tnSend(t, url, "GET", "/v1/sandboxes", key, "", "Origin", "https://evil.example"); r.status != 403 || r.header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("cross-site origin: %d", r.status)
	}
	if r := tnSend(t, url, "OPTIONS", "/v1/sandboxes", "", "", "Origin", "https://evil.example", "Access-Control-Request-Method", "POST"); r.header.Get("Access-Control-Allow-Origin") != "" ||
		r.header.Get("Access-Control-Allow-Methods") != "" {
		t.Fatalf("preflight got CORS headers: %v", r.header)
	}
	if r := tnSend(t, url, "GET", "/v1/sandboxes", key, "", "Origin", url); r.status != 200 {
		t.Fatalf("same origin: %d %s", r.status, r.body)
	}
	// A cross-site WebSocket handshake is refused before authentication.
	id := tnSandbox(t, e, key, `{}`)
	hdr := append([]string{"Origin", "https://evil.example"}, tnWSHeaders...)
	if r := tnSend(t, url, "GET", "/v1/sandboxes/"+id, key, "", hdr...); r.status != 403 {
		t.Fatalf("cross-site WebSocket: %d", r.status)
	}
}
