package secret

import (
	"errors"
	"fmt"
	"net/textproto"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/net/http/httpguts"

	"github.com/paddockhq/paddock/internal/egress/policy"
	"github.com/paddockhq/paddock/internal/errs"
)

// Rule is one entry of a sandbox spec's network.inject: HTTPS requests
// the sandbox sends to Host get header Header set to Value, a template
// whose {secret:NAME} placeholders (if any) are the tenant's secrets. Whatever the
// sandbox itself put in that header is replaced. Host is a name, for port
// 443, or "name:port" for another port.
type Rule struct {
	Host   string `json:"host"`
	Header string `json:"header"`
	Value  string `json:"value"`
}

// DefaultPort is the port a rule without one applies to.
const DefaultPort = 443

// Target returns the name and port r applies to (r normalised).
func (r Rule) Target() (string, int) {
	if name, ps, ok := strings.Cut(r.Host, ":"); ok {
		if p, err := strconv.Atoi(ps); err == nil {
			return name, p
		}
	}
	return r.Host, DefaultPort
}

// Limits on the rules of one sandbox.
const (
	MaxRules         = 32
	MaxRefs          = 8       // placeholders in one value
	MaxTemplateBytes = 4 << 10 // one value as written
	MaxRenderedBytes = 32 << 10
)

// refusedHeaders frame the request or the connection, or belong to the
// proxy: setting them would let a rule smuggle a second request past the
// proxy's parser or break its Host check.
var refusedHeaders = map[string]bool{
	"Host": true, "Content-Length": true, "Transfer-Encoding": true, "Connection": true, "Keep-Alive": true,
	"Te": true, "Trailer": true, "Upgrade": true, "Expect": true, "Proxy-Connection": true,
	"Proxy-Authorization": true, "Proxy-Authenticate": true, "Http2-Settings": true,
}

// NormalizeRules validates rules and returns them in canonical form
// (lower-case host, canonical header name). Errors name the offending
// entry as network.inject[i].
func NormalizeRules(rules []Rule) ([]Rule, error) {
	if len(rules) == 0 {
		return nil, nil
	}
	if len(rules) > MaxRules {
		return nil, errs.Invalid("network.inject: at most %d rules", MaxRules)
	}
	out := make([]Rule, 0, len(rules))
	seen := map[[2]string]bool{}
	for i, r := range rules {
		field := fmt.Sprintf("network.inject[%d]", i)
		host, err := normalizeHost(r.Host)
		if err != nil {
			return nil, errs.Invalid("%s.host %q: %v", field, clip(r.Host), err)
		}
		header, err := normalizeHeader(r.Header)
		if err != nil {
			return nil, errs.Invalid("%s.header %q: %v", field, clip(r.Header), err)
		}
		if _, err := ParseTemplate(r.Value); err != nil {
			return nil, errs.Invalid("%s.value: %v", field, err)
		}
		k := [2]string{host, header}
		if seen[k] {
			return nil, errs.Invalid("%s: a second rule for header %s on %s", field, header, host)
		}
		seen[k] = true
		out = append(out, Rule{Host: host, Header: header, Value: r.Value})
	}
	return out, nil
}

// normalizeHost accepts "name" or "name:port"; the canonical form drops
// the default port.
func normalizeHost(h string) (string, error) {
	h = strings.TrimSpace(h)
	if strings.HasPrefix(h, "*.") || h == "*" {
		return "", errors.New("give an exact host name (wildcards are not supported here)")
	}
	if strings.Contains(h, "/") || strings.Count(h, ":") > 1 || strings.Contains(h, "[") {
		return "", errors.New("give a host name and optionally :port (no scheme, path or IP address)")
	}
	name, ps, hasPort := strings.Cut(h, ":")
	port := DefaultPort
	if hasPort {
		p, err := strconv.Atoi(ps)
		if err != nil || p < 1 || p > 65535 || strconv.Itoa(p) != ps {
			return "", errors.New("the port must be 1-65535")
		}
		port = p
	}
	n, ok := policy.NormalizeName(name)
	if !ok {
		return "", errors.New("not a valid host name (IP addresses cannot be given)")
	}
	if port != DefaultPort {
		n += ":" + strconv.Itoa(port)
	}
	return n, nil
}

func normalizeHeader(h string) (string, error) {
	if !httpguts.ValidHeaderFieldName(h) {
		return "", errors.New("not a valid header name")
	}
	c := textproto.CanonicalMIMEHeaderKey(h)
	if refusedHeaders[c] || strings.HasPrefix(c, "Proxy-") || strings.HasPrefix(c, "Sec-") {
		return "", errors.New("this header frames the request or belongs to the proxy and cannot be injected")
	}
	return c, nil
}

// Names returns the secrets rules refer to, sorted and without repeats.
// The rules must be valid (NormalizeRules).
func Names(rules []Rule) []string {
	set := map[string]bool{}
	for _, r := range rules {
		t, err := ParseTemplate(r.Value)
		if err != nil {
			continue
		}
		for _, n := range t.Refs() {
			set[n] = true
		}
	}
	out := make([]string, 0, len(set))
	for n := range set {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// ForHost returns the rules for name (normalised) on port.
func ForHost(rules []Rule, name string, port int) []Rule {
	var out []Rule
	for _, r := range rules {
		if n, p := r.Target(); n == name && p == port {
			out = append(out, r)
		}
	}
	return out
}

// Template is a header value with {secret:NAME} placeholders.
type Template struct{ parts []part }

// part is literal text, or (ref != "") a secret's value.
type part struct{ lit, ref string }

const refOpen = "{secret:"

// ParseTemplate parses a header value template: literal text (valid in
// an HTTP header value) and {secret:NAME} placeholders. A value without
// any sets a fixed header (E2B's transform headers are mostly such). A
// "{" that does not open "{secret:" is literal.
func ParseTemplate(s string) (Template, error) {
	if len(s) > MaxTemplateBytes {
		return Template{}, fmt.Errorf("at most %d bytes", MaxTemplateBytes)
	}
	var t Template
	refs := 0
	rest := s
	for rest != "" {
		i := strings.Index(rest, refOpen)
		if i < 0 {
			t.parts = append(t.parts, part{lit: rest})
			break
		}
		if i > 0 {
			t.parts = append(t.parts, part{lit: rest[:i]})
		}
		rest = rest[i+len(refOpen):]
		j := strings.IndexByte(rest, '}')
		if j < 0 {
			return Template{}, errors.New("unterminated {secret:NAME}")
		}
		name := rest[:j]
		if !ValidName(name) {
			return Template{}, fmt.Errorf("{secret:%s}: invalid secret name", clip(name))
		}
		if refs++; refs > MaxRefs {
			return Template{}, fmt.Errorf("at most %d {secret:NAME} in one value", MaxRefs)
		}
		t.parts = append(t.parts, part{ref: name})
		rest = rest[j+1:]
	}
	for _, p := range t.parts {
		if p.ref == "" && !httpguts.ValidHeaderFieldValue(p.lit) {
			return Template{}, errors.New("the literal text holds characters not allowed in an HTTP header value")
		}
	}
	return t, nil
}

// Refs returns the secret names t refers to, in order (with repeats).
func (t Template) Refs() []string {
	var out []string
	for _, p := range t.parts {
		if p.ref != "" {
			out = append(out, p.ref)
		}
	}
	return out
}

// Render fills t in with values from get. The result is checked to be a
// valid header value: an error never carries any part of a value.
func (t Template) Render(get func(name string) ([]byte, error)) (string, error) {
	var b strings.Builder
	for _, p := range t.parts {
		if p.ref == "" {
			b.WriteString(p.lit)
			continue
		}
		v, err := get(p.ref)
		if err != nil {
			return "", err
		}
		if !httpguts.ValidHeaderFieldValue(string(v)) {
			return "", fmt.Errorf("secret %q holds characters not allowed in an HTTP header", p.ref)
		}
		b.Write(v)
		if b.Len() > MaxRenderedBytes {
			return "", fmt.Errorf("the header would be over %d bytes", MaxRenderedBytes)
		}
	}
	return b.String(), nil
}
