package mcp

import (
	"fmt"
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"
)

// schemaFor infers the JSON schema of T (descriptions from the jsonschema
// struct tags) and simplifies it for clients: a Go slice or pointer gives
// a type list ["null","array"], which several MCP clients and function-
// calling APIs reject or mishandle, so the plain type is kept. The tools
// never send null where a schema says array (outputs use empty slices)
// and an omitted argument is treated like an empty one.
func schemaFor[T any]() (*jsonschema.Schema, error) {
	s, err := jsonschema.ForType(reflect.TypeFor[T](), &jsonschema.ForOptions{})
	if err != nil {
		return nil, err
	}
	if s == nil {
		return nil, fmt.Errorf("no schema for %v", reflect.TypeFor[T]())
	}
	dropNull(s)
	return s, nil
}

func dropNull(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if len(s.Types) == 2 && s.Types[0] == "null" {
		s.Type, s.Types = s.Types[1], nil
	}
	for _, p := range s.Properties {
		dropNull(p)
	}
	dropNull(s.Items)
	if s.AdditionalProperties != nil {
		dropNull(s.AdditionalProperties)
	}
}
