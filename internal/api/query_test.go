package api

import "testing"

// The REST API's query parsing (it moved here from guestapi, whose copy
// nothing used any more).
func TestQuery(t *testing.T) {
	q := query{v: map[string][]string{"n": {"12"}, "f": {"2.5"}, "b": {""}}}
	if q.int("n") != 12 || q.float("f") != 2.5 || !q.bool("b") || q.bool("absent") || q.err != nil {
		t.Fatalf("good values misread: %v", q.err)
	}
	q = query{v: map[string][]string{"n": {"x"}, "b": {"maybe"}}}
	q.int("n")
	if q.err == nil {
		t.Fatal("a bad integer was accepted")
	}
	q = query{v: map[string][]string{"b": {"maybe"}}}
	q.bool("b")
	if q.err == nil {
		t.Fatal("a bad boolean was accepted")
	}
}
