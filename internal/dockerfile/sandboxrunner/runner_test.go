package sandboxrunner

import (
	"archive/tar"
	"bytes"
	"context"
	"io"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/dockerfile"
	"github.com/paddockhq/paddock/internal/sandbox"
)

// A capture's overlay form becomes the OCI form: 0/0 devices are ".wh."
// files, an opaque directory gets ".wh..wh..opq", overlayfs' bookkeeping
// attributes go, other user.* attributes and entries outside root/upper
// are handled as such.
func TestToOCI(t *testing.T) {
	var in bytes.Buffer
	tw := tar.NewWriter(&in)
	add := func(h *tar.Header, body string) {
		h.Format = tar.FormatPAX
		h.Size = int64(len(body))
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		io.WriteString(tw, body)
	}
	add(&tar.Header{Typeflag: tar.TypeDir, Name: "root/", Mode: 0o755}, "")
	add(&tar.Header{Typeflag: tar.TypeDir, Name: "root/upper/", Mode: 0o755}, "")
	add(&tar.Header{Typeflag: tar.TypeDir, Name: "root/upper/etc/", Mode: 0o755,
		PAXRecords: map[string]string{"SCHILY.xattr.user.overlay.impure": "y"}}, "")
	add(&tar.Header{Typeflag: tar.TypeChar, Name: "root/upper/etc/gone", Mode: 0}, "")
	add(&tar.Header{Typeflag: tar.TypeDir, Name: "root/upper/opt/", Mode: 0o755,
		PAXRecords: map[string]string{"SCHILY.xattr.user.overlay.opaque": "y", "SCHILY.xattr.user.mine": "kept"}}, "")
	add(&tar.Header{Typeflag: tar.TypeReg, Name: "root/upper/opt/new", Mode: 0o644, Uid: 1000, Gid: 1000}, "data")
	add(&tar.Header{Typeflag: tar.TypeDir, Name: "o0/upper/", Mode: 0o755}, "")
	add(&tar.Header{Typeflag: tar.TypeReg, Name: "o0/upper/elsewhere", Mode: 0o644}, "x")
	tw.Close()

	var out bytes.Buffer
	if err := toOCI(&in, &out); err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(&out)
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
		for k := range h.PAXRecords {
			if strings.Contains(k, "overlay") {
				t.Errorf("%s keeps %s", h.Name, k)
			}
		}
		switch h.Name {
		case "opt/":
			if h.PAXRecords["SCHILY.xattr.user.mine"] != "kept" {
				t.Errorf("opt/ lost its own attribute: %v", h.PAXRecords)
			}
		case "opt/new":
			b, _ := io.ReadAll(tr)
			if string(b) != "data" || h.Uid != 1000 {
				t.Errorf("opt/new: %q uid %d", b, h.Uid)
			}
		}
	}
	sort.Strings(names)
	want := "etc/ etc/.wh.gone opt/ opt/.wh..wh..opq opt/new"
	if got := strings.Join(names, " "); got != want {
		t.Fatalf("entries %q, want %q", got, want)
	}
}

type fakeStepper struct{ res sandbox.StepResult }

func (f fakeStepper) RunStep(ctx context.Context, r sandbox.StepRun, capture func(io.Reader) error) (sandbox.StepResult, error) {
	return f.res, nil
}

// A step ended by the builder's limits fails with a code and says which
// limit in its output.
func TestRunLimits(t *testing.T) {
	for _, c := range []struct {
		res  sandbox.StepResult
		code int
		says string
	}{
		{sandbox.StepResult{TimedOut: true, ExitCode: 0}, 124, "--builder-timeout"},
		{sandbox.StepResult{OOMKilled: true, ExitCode: 137, Signal: "SIGKILL"}, 137, "--builder-memory"},
		{sandbox.StepResult{Signal: "SIGKILL"}, 137, "killed by SIGKILL"},
	} {
		var out bytes.Buffer
		r := &Runner{Limits: Limits{MemoryMB: 64, Timeout: time.Second}, Steps: func() Stepper { return fakeStepper{c.res} }}
		res, err := r.Run(context.Background(), dockerfile.RunRequest{Cmd: []string{"x"}, Output: &out})
		if err != nil || res.ExitCode != c.code || !strings.Contains(out.String(), c.says) {
			t.Errorf("%+v: exit %d, err %v, output %q", c.res, res.ExitCode, err, out.String())
		}
	}
}
