package guestapi

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/paddockhq/paddock/internal/errs"
)

// What the REST API and its Go client share with this package for now
// (the guest protocol itself no longer uses queries or headers): query
// parsing and the headers of a REST file read.

// Query reads typed values out of a query, remembering the first error.
type Query struct {
	V   url.Values
	Err error
}

// Str returns the value of k.
func (q *Query) Str(k string) string { return q.V.Get(k) }

// Int returns the integer value of k (0 if absent).
func (q *Query) Int(k string) int64 {
	s := q.V.Get(k)
	if s == "" {
		return 0
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil && q.Err == nil {
		q.Err = errs.Invalid("%s=%q is not an integer", k, clipStr(s))
	}
	return n
}

// Float returns the number value of k (0 if absent).
func (q *Query) Float(k string) float64 {
	s := q.V.Get(k)
	if s == "" {
		return 0
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && q.Err == nil {
		q.Err = errs.Invalid("%s=%q is not a number", k, clipStr(s))
	}
	return f
}

// Bool returns the boolean value of k (false if absent; "" after "k" alone
// counts as true).
func (q *Query) Bool(k string) bool {
	vs, ok := q.V[k]
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
	if q.Err == nil {
		q.Err = errs.Invalid("%s=%q is not a boolean", k, clipStr(s))
	}
	return false
}

// Headers of a REST file read.
const (
	HeaderSize = "X-Paddock-Size"
	HeaderMode = "X-Paddock-Mode"
)
