package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/paddockhq/paddock/internal/errs"
)

// MaxJSONBody bounds every JSON request body.
const MaxJSONBody = 1 << 20

// maxJSONDepth bounds nesting, so a body of ten thousand '[' cannot make
// the decoder (or anything after it) work hard.
const maxJSONDepth = 32

// decode reads one JSON object from r's body into v: bounded size and depth,
// unknown fields and trailing data refused; an empty body is {}.
func decode(r *http.Request, v any) error { return decodeBody(r, v, MaxJSONBody, true) }

// decodeBody is decode with a size bound of max bytes; emptyIsObject reads
// an empty body as {} (else it is malformed).
func decodeBody(r *http.Request, v any, max int64, emptyIsObject bool) error {
	body, err := io.ReadAll(io.LimitReader(r.Body, max+1))
	if err != nil {
		return errs.Invalid("could not read the request body")
	}
	if int64(len(body)) > max {
		return errs.New(errs.CodeTooLarge, "request body over %d bytes", max)
	}
	if emptyIsObject && len(bytes.TrimSpace(body)) == 0 {
		body = []byte("{}")
	}
	if depth(body) > maxJSONDepth {
		return errs.Invalid("JSON nested deeper than %d levels", maxJSONDepth)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return errs.Invalid("malformed JSON body: %s", jsonErr(err))
	}
	if dec.More() {
		return errs.Invalid("malformed JSON body: trailing data after the object")
	}
	return nil
}

// depth returns the deepest nesting of brackets outside strings.
func depth(b []byte) int {
	d, max, inStr, esc := 0, 0, false, false
	for _, c := range b {
		switch {
		case esc:
			esc = false
		case inStr && c == '\\':
			esc = true
		case c == '"':
			inStr = !inStr
		case inStr:
		case c == '{' || c == '[':
			d++
			if d > max {
				max = d
			}
		case c == '}' || c == ']':
			d--
		}
	}
	return max
}

// jsonErr words a decoding error without echoing large input.
func jsonErr(err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return "syntax error"
	case errors.As(err, &te):
		if te.Field != "" {
			return "field " + te.Field + " has the wrong type"
		}
		return "wrong type"
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "unexpected end of input"
	}
	msg := err.Error()
	if len(msg) > 120 {
		msg = msg[:120]
	}
	return msg
}
