//go:build linux

package e2b_test

import (
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/paddockhq/paddock/internal/e2b"
)

// File metadata is on the file (user.e2b.* extended attributes): a new
// adapter over the same sandboxes — a restarted server — reports it, a
// command in the sandbox reads it with getfattr, a rename carries it, and
// an upload without metadata clears it.
func TestFileMetadataOnTheFile(t *testing.T) {
	s := newStack(t)
	key := s.key(t, "meta").Key
	sb := s.create(t, key, `{"templateID":"base"}`)
	h := envdHeaders(sb.SandboxID, sb.EnvdAccessToken)
	h["Content-Type"] = "application/octet-stream"
	h["X-Metadata-Team"], h["X-Metadata-Owner"] = "a", "bob b"
	if st, _, b := s.do(t, "POST", "/files?path=/home/user/m.txt", h, []byte("m")); st != 200 || !contains(string(b), `"metadata":{"owner":"bob b","team":"a"}`) {
		t.Fatalf("upload: %d %s", st, b)
	}

	// A second adapter, which has never seen the upload.
	fresh, err := e2b.New(e2b.Options{Manager: s.Manager, Auth: s.Auth, Tokens: s.Auth})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fresh.Close)
	hs := httptest.NewServer(fresh.Handler())
	t.Cleanup(hs.Close)
	s2 := &stack{Env: s.Env, URL: hs.URL}
	stat := func(t *testing.T, p string) map[string]string {
		t.Helper()
		st, b := s2.unary(t, sb.SandboxID, sb.EnvdAccessToken, "filesystem.Filesystem/Stat", `{"path":"`+p+`"}`)
		if st != 200 {
			t.Fatalf("stat %s: %d %s", p, st, b)
		}
		var out struct {
			Entry struct {
				Metadata map[string]string `json:"metadata"`
			} `json:"entry"`
		}
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatal(err)
		}
		return out.Entry.Metadata
	}
	if md := stat(t, "/home/user/m.txt"); md["team"] != "a" || md["owner"] != "bob b" || len(md) != 2 {
		t.Fatalf("after a restart: %v", md)
	}
	// On the file, for the workload to see.
	attrs := func(t *testing.T, p string) string {
		t.Helper()
		msg := `{"process":{"cmd":"/bin/sh","args":["-c","command -v getfattr >/dev/null || exit 99; getfattr -d -m '^user\\.' --absolute-names ` + p + `"]}}`
		_, msgs, _ := s2.streamed(t, sb.SandboxID, sb.EnvdAccessToken, "process.Process/Start", msg, nil)
		var out string
		code := -1
		for _, m := range msgs {
			var ev struct {
				Event struct {
					Data *struct{ Stdout []byte }
					End  *struct{ ExitCode int }
				}
			}
			if err := json.Unmarshal(m, &ev); err != nil {
				t.Fatal(err)
			}
			if ev.Event.Data != nil {
				out += string(ev.Event.Data.Stdout)
			}
			if ev.Event.End != nil {
				code = ev.Event.End.ExitCode
			}
		}
		if code == 99 {
			t.Skip("getfattr is not in the sandbox's image")
		}
		if code != 0 {
			t.Fatalf("getfattr: exit %d, %q", code, out)
		}
		return out
	}
	if got := attrs(t, "/home/user/m.txt"); !contains(got, `user.e2b.team="a"`) || !contains(got, `user.e2b.owner="bob b"`) {
		t.Fatalf("getfattr: %q", got)
	}
	// A rename carries it; the listing shows it.
	if st, b := s2.unary(t, sb.SandboxID, sb.EnvdAccessToken, "filesystem.Filesystem/Move",
		`{"source":"/home/user/m.txt","destination":"/home/user/n.txt"}`); st != 200 || !contains(string(b), `"team":"a"`) {
		t.Fatalf("move: %d %s", st, b)
	}
	if st, b := s2.unary(t, sb.SandboxID, sb.EnvdAccessToken, "filesystem.Filesystem/ListDir", `{"path":"/home/user"}`); st != 200 || !contains(string(b), `"team":"a"`) {
		t.Fatalf("list: %d %s", st, b)
	}
	// An upload without metadata clears it.
	delete(h, "X-Metadata-Team")
	delete(h, "X-Metadata-Owner")
	if st, _, b := s2.do(t, "POST", "/files?path=/home/user/n.txt", h, []byte("n")); st != 200 || contains(string(b), "metadata") {
		t.Fatalf("upload: %d %s", st, b)
	}
	if md := stat(t, "/home/user/n.txt"); len(md) != 0 {
		t.Fatalf("after an upload without metadata: %v", md)
	}
	if got := attrs(t, "/home/user/n.txt"); contains(got, "user.e2b.") {
		t.Fatalf("getfattr after clearing: %q", got)
	}
}
