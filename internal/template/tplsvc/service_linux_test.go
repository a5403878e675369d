//go:build linux

package tplsvc_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/audit"
	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/localtar"
	"github.com/paddockhq/paddock/internal/oci/ocitest"
	"github.com/paddockhq/paddock/internal/server"
	"github.com/paddockhq/paddock/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// stack is a server whose --registry-auth and --insecure-registry reach
// a local docker-registry holding one busybox image.
type stack struct {
	e   *testenv.Env
	reg *ocitest.Registry
	ref string
}

func newStack(t *testing.T) *stack {
	t.Helper()
	reg := ocitest.Start(t)
	s := &stack{reg: reg, ref: reg.Ref("paddock/bb:1")}
	reg.Push(t, s.ref, ocitest.Image(t, v1.Config{Env: []string{"PATH=/bin"}}, types.OCILayer,
		ocitest.Busybox(t, map[string]ocitest.File{"srv/": {Dir: true}, "srv/hello": {Body: "hello\n"}})))
	s.e = testenv.New(t, testenv.Options{Templates: server.TemplatesConfig{Insecure: []string{reg.Host}, AuthFile: reg.DockerConfig(t)}})
	return s
}

func (s *stack) tenant(t *testing.T, name string, q client.Quotas) *client.Client {
	t.Helper()
	ctx := context.Background()
	if _, err := s.e.Client.CreateTenant(ctx, name, q); err != nil {
		t.Fatal(err)
	}
	k, err := s.e.Client.CreateKey(ctx, client.KeyRequest{Tenant: name, Scopes: []client.Scope{auth.ScopeRead, auth.ScopeWrite, auth.ScopeExec}})
	if err != nil {
		t.Fatal(err)
	}
	return client.New(s.e.Server.URL, k.Key)
}

func code(err error) string {
	if ce, ok := err.(*client.Error); ok {
		return ce.Code
	}
	if err == nil {
		return ""
	}
	return "?" + err.Error()
}

func names(t *testing.T, c *client.Client) string {
	t.Helper()
	list, err := c.Templates(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range list {
		if l.Kind == "image" {
			out = append(out, l.Name)
		}
	}
	return strings.Join(out, ",")
}

// Tenancy through REST: a tenant's templates are its own (another
// tenant's is "not found", never "forbidden"), an admin publishes shared
// ones, quotas bound count and bytes, in-use templates are not removed,
// and every action is in the audit log.
func TestTemplateTenancy(t *testing.T) {
	s := newStack(t)
	ctx := context.Background()
	a := s.tenant(t, "ta", client.Quotas{MaxTemplates: 1})
	b := s.tenant(t, "tb", client.Quotas{MaxTemplateMB: 1})

	var events int
	ta, err := a.PullTemplate(ctx, client.TemplatePullRequest{Ref: s.ref, Name: "mine"}, func(client.TemplateEvent) { events++ })
	if err != nil {
		t.Fatalf("pull: %v", err)
	}
	if ta.Name != "mine" || ta.Shared || ta.Kind != "image" || ta.Source == nil || ta.Source.Digest == "" || events == 0 {
		t.Fatalf("pulled %+v after %d progress events", ta, events)
	}
	if got := names(t, a); got != "mine" {
		t.Fatalf("a lists %q", got)
	}
	if got := names(t, b); got != "" {
		t.Fatalf("b lists a's templates: %q", got)
	}
	if _, err := b.Template(ctx, "mine"); code(err) != "not_found" {
		t.Fatalf("b gets a's template: %v", err)
	}
	if _, err := b.Create(ctx, client.Spec{Template: "mine"}); code(err) != "not_found" {
		t.Fatalf("b creates from a's template: %v", err)
	}
	if err := b.DeleteTemplate(ctx, "mine"); code(err) != "not_found" {
		t.Fatalf("b deletes a's template: %v", err)
	}
	// Quotas: a has one template; b's 1 MiB cannot hold busybox (~2 MiB).
	if _, err := a.PullTemplate(ctx, client.TemplatePullRequest{Ref: s.ref, Name: "second"}, nil); code(err) != "limit_exceeded" {
		t.Fatalf("a's second template: %v", err)
	}
	if _, err := b.PullTemplate(ctx, client.TemplatePullRequest{Ref: s.ref, Name: "big"}, nil); code(err) != "limit_exceeded" {
		t.Fatalf("b over its bytes: %v", err)
	}
	if got := names(t, b); got != "" {
		t.Fatalf("an over-quota pull left %q", got)
	}
	// Only an admin publishes.
	if _, err := a.PullTemplate(ctx, client.TemplatePullRequest{Ref: s.ref, Name: "pub", Shared: true}, nil); code(err) != "forbidden" {
		t.Fatalf("a publishes: %v", err)
	}
	if _, err := s.e.Client.PullTemplate(ctx, client.TemplatePullRequest{Ref: s.ref, Name: "pub", Shared: true}, nil); err != nil {
		t.Fatalf("admin publishes: %v", err)
	}
	if got := names(t, b); got != "pub" {
		t.Fatalf("b lists %q, want the shared one", got)
	}
	// A sandbox from a's own template; rm refused while it runs.
	sb, err := a.Create(ctx, client.Spec{Template: "mine"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Exec(ctx, sb.ID, client.ExecRequest{Cmd: []string{"cat", "/srv/hello"}})
	if err != nil || res.Stdout != "hello\n" {
		t.Fatalf("exec: %v %q", err, res.Stdout)
	}
	if err := a.DeleteTemplate(ctx, "mine"); code(err) != "conflict" {
		t.Fatalf("rm in use: %v", err)
	}
	if err := b.DeleteTemplate(ctx, "pub"); code(err) != "forbidden" {
		t.Fatalf("b removes the shared template: %v", err)
	}
	if err := a.Delete(ctx, sb.ID); err != nil {
		t.Fatal(err)
	}
	if err := a.DeleteTemplate(ctx, "mine"); err != nil {
		t.Fatalf("rm: %v", err)
	}
	for _, action := range []string{"template.pull", "template.delete"} {
		recs := s.e.AuditRecords(audit.Query{Action: action, Tenant: "ta", Limit: 100})
		if len(recs) == 0 {
			t.Errorf("no %s audit records for ta", action)
		}
	}
}

// A build through REST, as `paddock template build` sends it (the
// context a localtar tar): FROM a template and a registry image,
// multi-stage COPY --from, ENV, WORKDIR, USER; the rebuild is all cache;
// a sandbox from it sees the result.
func TestTemplateBuild(t *testing.T) {
	s := newStack(t)
	ctx := context.Background()
	a := s.tenant(t, "builder", client.Quotas{})
	if _, err := a.PullTemplate(ctx, client.TemplatePullRequest{Ref: s.ref, Name: "bb"}, nil); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	df := "FROM bb AS src\nCOPY hello.txt /opt/hello.txt\n" +
		"FROM " + s.ref + "\nENV GREETING=hi\nWORKDIR /app\nCOPY --from=src /opt/hello.txt ./\nUSER root\n"
	for n, body := range map[string]string{"Dockerfile": df, "hello.txt": "built\n", ".dockerignore": "secret\n", "secret": "no\n"} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	build := func(replace bool) (client.Template, []client.TemplateEvent, time.Duration) {
		var buf bytes.Buffer
		if err := localtar.Write(&buf, dir, io.Discard); err != nil {
			t.Fatal(err)
		}
		var evs []client.TemplateEvent
		start := time.Now()
		tpl, err := a.BuildTemplate(ctx, client.TemplateBuild{Name: "app", Replace: replace}, &buf, int64(buf.Len()),
			func(e client.TemplateEvent) { evs = append(evs, e) })
		if err != nil {
			t.Fatalf("build: %v", err)
		}
		return tpl, evs, time.Since(start)
	}
	tpl, evs, first := build(false)
	if tpl.Source == nil || tpl.Source.Kind != "build" || !strings.HasPrefix(tpl.Source.DockerfileDigest, "sha256:") {
		t.Fatalf("built %+v", tpl)
	}
	_, evs2, again := build(true)
	layered := 0
	for _, e := range evs2 {
		// Every step that makes a layer comes from the cache (FROM
		// resolves its base again; ENV and USER make none).
		if strings.HasPrefix(e.Instruction, "COPY") || strings.HasPrefix(e.Instruction, "WORKDIR") {
			layered++
			if !e.Cached {
				t.Errorf("rebuild ran %q again", e.Instruction)
			}
		}
		if strings.Contains(e.Message, "builder.") {
			t.Errorf("a message shows the stored name: %q", e.Message)
		}
	}
	if layered < 3 {
		t.Errorf("rebuild reported %d layer steps: %+v", layered, evs2)
	}
	t.Logf("build %s (%d events), cached rebuild %s", first, len(evs), again)
	sb, err := a.Create(ctx, client.Spec{Template: "app"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Exec(ctx, sb.ID, client.ExecRequest{Cmd: []string{"sh", "-c", "pwd; cat hello.txt; echo $GREETING; id -u; test -e /secret || echo ignored"}})
	if err != nil || res.Stdout != "/app\nbuilt\nhi\n0\nignored\n" {
		t.Fatalf("exec: %v %q %q", err, res.Stdout, res.Stderr)
	}
	recs := s.e.AuditRecords(audit.Query{Action: "template.build", Tenant: "builder", Limit: 100})
	if len(recs) == 0 || !strings.Contains(string(mustJSON(t, recs[len(recs)-1])), tpl.Source.DockerfileDigest) {
		t.Errorf("build audit records lack the Dockerfile's digest: %v", recs)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
