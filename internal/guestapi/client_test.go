package guestapi

import (
	"context"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/paddockhq/paddock/internal/errs"
)

// fakeGuest answers every request with body under status.
func fakeGuest(t *testing.T, status int, body []byte) *Client {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "g.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(status)
		_, _ = w.Write(body)
	})}
	go srv.Serve(ln)
	c := NewClient(sock)
	t.Cleanup(func() { c.Close(); srv.Close() })
	return c
}

// TestClientDistrustsTheGuest: a compromised agent controls what comes
// back; the host gets a coded error, never a panic or an allocation the
// agent asked for.
func TestClientDistrustsTheGuest(t *testing.T) {
	ctx := context.Background()
	notFound := AppendFrame(nil, FrameError, []byte(`{"code":"not_found","message":"gone"}`))
	for _, tc := range []struct {
		name   string
		status int
		body   []byte
		code   errs.Code
	}{
		{"an error frame", 404, notFound, errs.CodeNotFound},
		{"an error status without a frame", 500, []byte("oops"), errs.CodeUnavailable},
		{"a head claiming 2 GiB", 200, []byte{FrameHead, 0x80, 0, 0, 0, '{'}, errs.CodeUnavailable},
		{"not JSON", 200, AppendFrame(nil, FrameHead, []byte("{nope")), errs.CodeUnavailable},
		{"a data frame for a head", 200, AppendFrame(nil, FrameData, []byte("{}")), errs.CodeUnavailable},
		{"nothing", 200, nil, errs.CodeSandboxNotActive},
	} {
		_, err := fakeGuest(t, tc.status, tc.body).Stat(ctx, StatRequest{Path: "/w"})
		if errs.CodeOf(err) != tc.code {
			t.Errorf("%s: %v, want %s", tc.name, err, tc.code)
		}
	}
	// A download whose data stops short of its head's length is an
	// error, not a shorter file.
	var short []byte
	short = AppendFrame(short, FrameHead, []byte(`{"size":10,"offset":0,"length":10,"mode":"0644"}`))
	short = AppendFrame(short, FrameData, []byte("12345"))
	short = AppendFrame(short, FrameEnd, []byte(`{}`))
	fr, err := fakeGuest(t, 200, short).ReadFile(ctx, ReadRequest{Path: "/w/f"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(fr.Body)
	fr.Body.Close()
	if err == nil || string(b) != "12345" {
		t.Fatalf("a short download read %q, %v", b, err)
	}
	// An exec stream with an unknown frame ends with an error.
	var ex []byte
	ex = AppendFrame(ex, FrameHead, []byte(`{"pid":3}`))
	ex = AppendFrame(ex, 'Z', nil)
	if _, err := fakeGuest(t, 200, ex).Exec(ctx, ExecRequest{Argv: []string{"x"}}, nil, nopOutput{}); errs.CodeOf(err) != errs.CodeUnavailable {
		t.Fatalf("an unknown frame: %v", err)
	}
}

type nopOutput struct{}

func (nopOutput) Stdout([]byte) error { return nil }
func (nopOutput) Stderr([]byte) error { return nil }
