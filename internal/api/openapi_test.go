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
