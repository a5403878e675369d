//go:build linux

package tplsvc_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/localtar"
)

// writeCtx writes files into a fresh context directory.
func writeCtx(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for n, body := range files {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// buildCtx is dir as the tar `paddock template build` sends.
func buildCtx(t *testing.T, dir string) *bytes.Buffer {
	t.Helper()
	var buf bytes.Buffer
	if err := localtar.Write(&buf, dir, io.Discard); err != nil {
		t.Fatal(err)
	}
	return &buf
}

func buildTpl(t *testing.T, c *client.Client, req client.TemplateBuild, dir string) (client.Template, []client.TemplateEvent, error) {
	t.Helper()
	buf := buildCtx(t, dir)
	var evs []client.TemplateEvent
	tpl, err := c.BuildTemplate(context.Background(), req, buf, int64(buf.Len()), func(e client.TemplateEvent) { evs = append(evs, e) })
	return tpl, evs, err
}

// RUN through REST runs in a Paddock sandbox over the layers so far: a
// multi-stage build with FROM (a template and a local-registry image),
// RUN, COPY, ENV, WORKDIR, USER and COPY --from; a sandbox of the result
// sees what the RUN steps wrote and not what they deleted; the steps ran
// under seccomp and no_new_privs as root of a user namespace.
func TestTemplateBuildRun(t *testing.T) {
	s := newStack(t)
	ctx := context.Background()
	a := s.tenant(t, "runner", client.Quotas{})
	if _, err := a.PullTemplate(ctx, client.TemplatePullRequest{Ref: s.ref, Name: "bb"}, nil); err != nil {
		t.Fatal(err)
	}
	df := "FROM bb AS src\nRUN echo from-src > /srv/src.txt\n" +
		"FROM " + s.ref + "\nENV GREETING=hi\nWORKDIR /app\n" +
		"RUN echo \"$GREETING\" > made.txt && rm /srv/hello && grep -E '^(Seccomp|NoNewPrivs):' /proc/self/status > posture.txt && cat /proc/self/uid_map > uidmap.txt\n" +
		"COPY hello.txt ./\nCOPY --from=src /srv/src.txt ./\nUSER 1000\nRUN id -u > /tmp/uid.txt\n"
	dir := writeCtx(t, map[string]string{"Dockerfile": df, "hello.txt": "built\n"})
	tpl, evs, err := buildTpl(t, a, client.TemplateBuild{Name: "ran"}, dir)
	if err != nil {
		t.Fatalf("build: %v (events %+v)", err, evs)
	}
	if tpl.Name != "ran" {
		t.Fatalf("built %+v", tpl)
	}
	sb, err := a.Create(ctx, client.Spec{Template: "ran"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Exec(ctx, sb.ID, client.ExecRequest{User: "root", Cmd: []string{"sh", "-c",
		"pwd; cat made.txt hello.txt src.txt /tmp/uid.txt; test -e /srv/hello || echo deleted; cat posture.txt"}})
	if err != nil {
		t.Fatal(err)
	}
	want := "/app\nhi\nbuilt\nfrom-src\n1000\ndeleted\nNoNewPrivs:\t1\nSeccomp:\t2\n"
	if res.Stdout != want {
		t.Fatalf("exec: %q (stderr %q), want %q", res.Stdout, res.Stderr, want)
	}
	// Root of the step was not the host's root: its uid 0 maps to an
	// unprivileged host uid.
	um, err := a.Exec(ctx, sb.ID, client.ExecRequest{User: "root", Cmd: []string{"cat", "/app/uidmap.txt"}})
	if err != nil {
		t.Fatal(err)
	}
	if f := strings.Fields(um.Stdout); len(f) < 3 || f[0] != "0" || f[1] == "0" {
		t.Fatalf("the RUN's uid map %q: its root is the host's", um.Stdout)
	}
	// The sandbox's own setup (/etc/hosts...) is not part of the layers.
	if r, _ := a.Exec(ctx, sb.ID, client.ExecRequest{User: "root", Cmd: []string{"sh", "-c", "grep -c build /etc/hostname; true"}}); strings.TrimSpace(r.Stdout) != "0" {
		t.Errorf("the build sandbox's hostname leaked into the image: %q", r.Stdout)
	}
	// A cached rebuild runs nothing.
	_, evs, err = buildTpl(t, a, client.TemplateBuild{Name: "ran", Replace: true}, dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		if strings.HasPrefix(e.Instruction, "RUN") && !e.Cached {
			t.Errorf("rebuild ran %q again: %+v", e.Instruction, evs)
		}
		if e.Output != "" {
			t.Errorf("a cached rebuild printed step output %q", e.Output)
		}
	}
}

// A RUN that fails reports its exit code and the tail of its output, and
// nothing is installed.
func TestTemplateBuildRunFails(t *testing.T) {
	s := newStack(t)
	a := s.tenant(t, "failer", client.Quotas{})
	df := "FROM " + s.ref + "\nRUN echo about to fail; echo on stderr >&2; exit 7\n"
	_, _, err := buildTpl(t, a, client.TemplateBuild{Name: "broken"}, writeCtx(t, map[string]string{"Dockerfile": df}))
	ce, ok := err.(*client.Error)
	if !ok || ce.Code != "invalid_argument" || !strings.Contains(ce.Message, "exit code 7") ||
		!strings.Contains(ce.Message, "about to fail") || !strings.Contains(ce.Message, "on stderr") {
		t.Fatalf("failed RUN: %v", err)
	}
	if _, err := a.Template(context.Background(), "broken"); code(err) != "not_found" {
		t.Fatalf("a failed build left a template: %v", err)
	}
}
