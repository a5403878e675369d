package api

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/paddockhq/paddock/internal/errs"
)

// query reads typed values out of a URL query, remembering the first
// error.
type query struct {
	v   url.Values
	err error
}

// str returns the value of k.
func (q *query) str(k string) string { return q.v.Get(k) }

// has reports whether k is given.
func (q *query) has(k string) bool { return q.v.Has(k) }

// int returns the integer value of k (0 if absent).
func (q *query) int(k string) int64 {
	s := q.v.Get(k)
	if s == "" {
		return 0
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil && q.err == nil {
		q.err = errs.Invalid("%s=%q is not an integer", k, clipPath(s))
	}
	return n
}

// float returns the number value of k (0 if absent).
func (q *query) float(k string) float64 {
	s := q.v.Get(k)
	if s == "" {
		return 0
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && q.err == nil {
		q.err = errs.Invalid("%s=%q is not a number", k, clipPath(s))
	}
	return f
}

// bool returns the boolean value of k (false if absent; "k" alone, with
// no value, counts as true).
func (q *query) bool(k string) bool {
	vs, ok := q.v[k]
	if !ok {
		return false
	}
	s := ""
	if len(vs) > 0 {
		s = vs[0]
	}
	switch strings.ToLower(s) {
	case "", "1", "true", "yes", "on":
		return true
	case "0", "false", "no", "off":
		return false
	}
	if q.err == nil {
		q.err = errs.Invalid("%s=%q is not a boolean", k, clipPath(s))
	}
	return false
}
