package sandbox

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/errs"
)

// FuzzSpecNormalize: a create request's JSON body, decoded as the API
// does, then normalised. Normalize never panics; what it accepts is within
// the limits, has a valid network mode, and normalising it again changes
// nothing; what it refuses is an invalid_argument naming the problem.
func FuzzSpecNormalize(f *testing.F) {
	for _, s := range []string{
		`{}`,
		`{"template":"host","cpu":0.5,"memory_mb":256,"disk_mb":64,"pids":64,"timeout_s":60}`,
		`{"labels":{"team":"ml","a/b.c-d_e":"v"},"env":{"FOO":"bar","_X1":""}}`,
		`{"network":{"mode":"allowlist","allow":["api.github.com","*.pypi.org:443"],"allow_cidr":["203.0.113.0/24"]}}`,
		`{"network":{"mode":"open"}}`,
		`{"network":{"mode":"none","allow":["x.com"]}}`,
		`{"network":{"mode":"allowlist","allow":["*.com"]}}`,
		`{"cpu":-1}`, `{"cpu":1e308}`, `{"memory_mb":9223372036854775807}`, `{"timeout_s":-9223372036854775808}`,
		`{"labels":{"":"x"}}`, `{"env":{"A=B":"x"}}`, `{"env":{"X":"a\u0000b"}}`,
		`{"labels":{"k":"\ud800"}}`, `{"network":{"mode":"allowlist","allow_cidr":["10.0.0.1/8"]}}`,
	} {
		f.Add([]byte(s))
	}
	l := DefaultLimits(2)
	f.Fuzz(func(t *testing.T, body []byte) {
		var s Spec
		if json.Unmarshal(body, &s) != nil {
			return
		}
		n, err := l.Normalize(s)
		if err != nil {
			if errs.CodeOf(err) != errs.CodeInvalid {
				t.Fatalf("refusal with code %s: %v", errs.CodeOf(err), err)
			}
			if errs.Public(err) == "" {
				t.Fatal("a refusal without a public message")
			}
			return
		}
		switch {
		case n.CPU < 0.05 || n.CPU > l.MaxCPU, n.MemoryMB < 32 || n.MemoryMB > l.MaxMemoryMB,
			n.DiskMB < 16 || n.DiskMB > l.MaxDiskMB, n.Pids < 8 || n.Pids > l.MaxPids,
			n.TimeoutS < 1 || time.Duration(n.TimeoutS)*time.Second > l.MaxTimeout:
			t.Fatalf("accepted out of limits: %+v", n)
		case n.Template == "":
			t.Fatal("no template after defaults")
		case n.Network == nil || (n.Network.Mode != NetNone && n.Network.Mode != NetAllowlist && n.Network.Mode != NetOpen):
			t.Fatalf("accepted network %+v", n.Network)
		}
		for k, v := range n.Env {
			if strings.ContainsAny(k, "=\x00") || strings.Contains(v, "\x00") {
				t.Fatalf("accepted env %q=%q", k, v)
			}
		}
		again, err := l.Normalize(n)
		if err != nil {
			t.Fatalf("normalised spec refused on a second pass: %v", err)
		}
		if !reflect.DeepEqual(again, n) {
			t.Fatalf("Normalize is not idempotent:\n%+v\n%+v", n, again)
		}
	})
}

// FuzzValidID: only the exact shape of a minted id is valid.
func FuzzValidID(f *testing.F) {
	f.Add(newID())
	for _, s := range []string{"", "sb-", "sb-aaaaaaaaaaaaaaaaaaaaaaaaaa", "sb-AAAAAAAAAAAAAAAAAAAAAAAAAA", "../etc", "sb-aaaaaaaaaaaaaaaaaaaaaaaaa\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !ValidID(s) {
			return
		}
		if len(s) != 29 || !strings.HasPrefix(s, "sb-") || strings.Trim(s[3:], "abcdefghijklmnopqrstuvwxyz234567") != "" {
			t.Fatalf("accepted %q", s)
		}
	})
}

// FuzzCleanIn: a file API path and user from a query string. Accepted
// paths are absolute, clean, free of NUL and "..".
func FuzzCleanIn(f *testing.F) {
	for _, s := range []string{"/workspace/a.txt", "a/b", "../etc/passwd", "/proc/self/fd/3", "a\x00b", "//x//y/", strings.Repeat("a/", 3000), "/" + strings.Repeat("x", 300)} {
		f.Add(s, "")
		f.Add(s, "user")
	}
	f.Add("/x", "admin")
	f.Fuzz(func(t *testing.T, p, user string) {
		c, err := cleanIn("path", p, user)
		if err != nil {
			if errs.CodeOf(err) != errs.CodeInvalid {
				t.Fatalf("refusal with code %s: %v", errs.CodeOf(err), err)
			}
			return
		}
		if user != "" && user != "root" && user != "user" {
			t.Fatalf("accepted user %q", user)
		}
		if !strings.HasPrefix(c, "/") || strings.Contains(c, "\x00") || strings.Contains(c, "//") {
			t.Fatalf("%q cleaned to %q", p, c)
		}
		for _, el := range strings.Split(c, "/") {
			if el == ".." {
				t.Fatalf("%q cleaned to %q, with ..", p, c)
			}
		}
	})
}

// FuzzValidateProcess: a start-process body. What is accepted has a
// program (or a terminal), no NUL in arguments, valid names.
func FuzzValidateProcess(f *testing.F) {
	for _, s := range []string{
		`{"cmd":["sleep","10"]}`, `{"pty":{"rows":24,"cols":80}}`, `{"cmd":[""]}`, `{"cmd":["a\u0000b"]}`,
		`{"cmd":["x"],"tag":"web/1"}`, `{"cmd":["x"],"user":"nobody"}`, `{"cmd":["x"],"buffer_bytes":1}`,
		`{"cmd":["x"],"env":{"1X":"y"}}`, `{"pty":{"rows":0,"cols":99999}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var req ProcessRequest
		if json.Unmarshal(body, &req) != nil {
			return
		}
		if err := validateProcess(&req); err != nil {
			if errs.CodeOf(err) != errs.CodeInvalid {
				t.Fatalf("refusal with code %s: %v", errs.CodeOf(err), err)
			}
			return
		}
		if len(req.Cmd) == 0 && req.PTY == nil {
			t.Fatal("accepted a process with neither a command nor a terminal")
		}
		for _, a := range req.Cmd {
			if strings.Contains(a, "\x00") {
				t.Fatalf("accepted an argument with NUL: %q", a)
			}
		}
	})
}
