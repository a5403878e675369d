package api

import (
	"embed"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"sync"
)

// The OpenAPI document is assembled from one fragment per area
// (openapi/*.json: {"paths":{...},"components":{"schemas":{...},...}}), so
// each area documents its own routes. TestOpenAPIMatchesRoutes keeps the
// document and the served routes identical.
//
//go:embed openapi/*.json
var openapiFS embed.FS

var (
	openapiOnce sync.Once
	openapiDoc  []byte
	openapiErr  error
)

// OpenAPI returns the merged document.
func OpenAPI() ([]byte, error) {
	openapiOnce.Do(func() { openapiDoc, openapiErr = buildOpenAPI() })
	return openapiDoc, openapiErr
}

func buildOpenAPI() ([]byte, error) {
	doc := map[string]any{
		"openapi": "3.1.0",
		"info": map[string]any{
			"title":       "Paddock API",
			"version":     "1",
			"description": "Self-hosted sandboxes for AI agents. Authenticate with `Authorization: Bearer KEY`. Errors are `{\"error\":{\"code\",\"message\"}}`.",
		},
		"components": map[string]any{
			"securitySchemes": map[string]any{"bearer": map[string]any{"type": "http", "scheme": "bearer"}},
		},
		"security": []any{map[string]any{"bearer": []any{}}},
	}
	paths := map[string]any{}
	components := doc["components"].(map[string]any)
	ents, err := openapiFS.ReadDir("openapi")
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	for _, n := range names {
		b, err := openapiFS.ReadFile("openapi/" + n)
		if err != nil {
			return nil, err
		}
		var frag struct {
			Paths      map[string]map[string]any `json:"paths"`
			Components map[string]map[string]any `json:"components"`
		}
		if err := json.Unmarshal(b, &frag); err != nil {
			return nil, fmt.Errorf("openapi/%s: %w", n, err)
		}
		for p, ops := range frag.Paths {
			cur, _ := paths[p].(map[string]any)
			if cur == nil {
				cur = map[string]any{}
			}
			for m, op := range ops {
				if _, dup := cur[m]; dup {
					return nil, fmt.Errorf("openapi/%s: %s %s documented twice", n, m, p)
				}
				cur[m] = op
			}
			paths[p] = cur
		}
		for section, items := range frag.Components {
			cur, _ := components[section].(map[string]any)
			if cur == nil {
				cur = map[string]any{}
			}
			for k, v := range items {
				if _, dup := cur[k]; dup {
					return nil, fmt.Errorf("openapi/%s: components.%s.%s defined twice", n, section, k)
				}
				cur[k] = v
			}
			components[section] = cur
		}
	}
	doc["paths"] = paths
	return json.MarshalIndent(doc, "", "  ")
}

func (s *Server) openapi(w http.ResponseWriter, r *http.Request) {
	b, err := OpenAPI()
	if err != nil {
		s.log.Error("openapi", "err", err)
		writeError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}
