//go:build linux

package e2b_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/oci/ocitest"
	"github.com/paddockhq/paddock/internal/server"
	"github.com/paddockhq/paddock/internal/testenv"
)

// tplBase serves a busybox image from a local registry (what CI can
// reach: docker-registry on 127.0.0.1) for fromImage, and returns its
// reference and serve's flags for reaching it. The image has a bash (the
// SDK runs commands with /bin/bash -l -c), here busybox's sh.
func tplBase(t *testing.T) (string, server.TemplatesConfig) {
	t.Helper()
	reg := ocitest.Start(t)
	ref := reg.Ref("paddock/e2b-base:1")
	files := map[string]ocitest.File{
		"bin/bash": {Body: "#!/bin/sh\nexec /bin/sh \"$@\"\n", Mode: 0o755},
		"bin/stat": {Link: "busybox"},
		"bin/find": {Link: "busybox"},
		"root/":    {Dir: true},
		"tmp/":     {Dir: true, Mode: 0o1777},
	}
	reg.Push(t, ref, ocitest.Image(t, v1.Config{Env: []string{"PATH=/bin"}}, types.OCILayer, ocitest.Busybox(t, files)))
	return ref, server.TemplatesConfig{Insecure: []string{reg.Host}, AuthFile: reg.DockerConfig(t)}
}

// tplContext is the file context the SDK script's copy() steps read.
func tplContext(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range map[string]string{"hello.txt": "hello from the context\n", "conf/a.txt": "conf a\n"} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// gzTar is a gzip'd tar of files (name → body; a name ending in / is a
// directory).
func gzTar(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for name, body := range files {
		h := &tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}
		if strings.HasSuffix(name, "/") {
			h = &tar.Header{Name: name, Mode: 0o755, Typeflag: tar.TypeDir}
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestTemplateBuildAPI drives E2B's template build routes as the SDK does,
// and what the SDK never sends: another tenant's build is 404 (its own
// the positive control), a key without write is refused, a COPY whose
// files were never uploaded is refused before anything runs, tags and
// build resources are refused (never ignored), an upload with hostile
// names lands inside its COPY directory only, a started build cannot be
// started again, and a tenant runs at most two builds at once.
func TestTemplateBuildAPI(t *testing.T) {
	ref, tc := tplBase(t)
	e := testenv.New(t, testenv.Options{Templates: tc})
	s := &stack{Env: e, URL: e.Server.URL}
	a := s.key(t, "tpla").Key
	b := s.key(t, "tplb").Key
	ro := s.key(t, "tpla", auth.ScopeRead).Key
	hdr := func(key string) map[string]string {
		return map[string]string{"X-API-KEY": key, "Content-Type": "application/json"}
	}
	open := func(key, name string) (string, string) {
		t.Helper()
		st, _, body := s.do(t, "POST", "/v3/templates", hdr(key), []byte(`{"name":"`+name+`"}`))
		if st != http.StatusAccepted {
			t.Fatalf("POST /v3/templates %s: %d %s", name, st, body)
		}
		var v struct{ TemplateID, BuildID string }
		if err := json.Unmarshal(body, &v); err != nil {
			t.Fatal(err)
		}
		return v.TemplateID, v.BuildID
	}
	status := func(key, tpl, build string) (int, map[string]any) {
		t.Helper()
		st, _, body := s.do(t, "GET", "/templates/"+tpl+"/builds/"+build+"/status", hdr(key), nil)
		var v map[string]any
		_ = json.Unmarshal(body, &v)
		return st, v
	}
	wait := func(key, tpl, build string) map[string]any {
		t.Helper()
		deadline := time.Now().Add(2 * time.Minute)
		for time.Now().Before(deadline) {
			st, v := status(key, tpl, build)
			if st != http.StatusOK {
				t.Fatalf("status: %d %v", st, v)
			}
			if v["status"] == "ready" || v["status"] == "error" {
				return v
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Fatal("the build did not end")
		return nil
	}

	// Refusals that are never silent.
	for body, want := range map[string]int{
		`{"name":"x","tags":["v1"]}`: http.StatusNotImplemented,
		`{"name":"x:v1"}`:            http.StatusNotImplemented,
		`{"name":"x","cpuCount":4}`:  http.StatusNotImplemented,
		`{"name":"X Y"}`:             http.StatusBadRequest,
		`{"name":"x","bogus":1}`:     http.StatusBadRequest,
	} {
		if st, _, rb := s.do(t, "POST", "/v3/templates", hdr(a), []byte(body)); st != want {
			t.Errorf("POST /v3/templates %s: %d %s, want %d", body, st, rb, want)
		}
	}
	if st, _, rb := s.do(t, "POST", "/v3/templates", hdr(ro), []byte(`{"name":"x"}`)); st != http.StatusForbidden {
		t.Errorf("a read-only key opened a build: %d %s", st, rb)
	}

	// An upload whose entries climb out: rewritten under the COPY's
	// directory, so the build sees only what is inside it.
	tpl, build := open(a, "api-built")
	hash := strings.Repeat("ab", 32)
	st, _, body := s.do(t, "GET", "/templates/"+tpl+"/files/"+hash, hdr(a), nil)
	var link struct {
		Present bool
		URL     string
		Headers map[string]string
	}
	if err := json.Unmarshal(body, &link); err != nil || st != http.StatusCreated || link.Present || link.URL == "" {
		t.Fatalf("file link: %d %s", st, body)
	}
	if link.Headers["X-API-KEY"] != a {
		t.Fatalf("the upload link's headers %v do not authenticate as the caller", link.Headers)
	}
	up := gzTar(t, map[string]string{"../../escape.txt": "climbed\n", "/abs/x.txt": "abs\n", "ok/": "", "ok/f.txt": "fine\n"})
	put := func(key string) int {
		req, _ := http.NewRequest("PUT", link.URL, bytes.NewReader(up))
		req.Header.Set("X-API-KEY", key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if st := put(ro); st != http.StatusForbidden {
		t.Errorf("a read-only key uploaded: %d", st)
	}
	if st := put(a); st != http.StatusOK {
		t.Fatalf("upload: %d", st)
	}
	if st, _, body = s.do(t, "GET", "/templates/"+tpl+"/files/"+hash, hdr(a), nil); !strings.Contains(string(body), `"present":true`) {
		t.Fatalf("after the upload: %d %s", st, body)
	}
	// Tenant B has no such staged files: its own link says upload.
	if _, _, body = s.do(t, "GET", "/templates/"+tpl+"/files/"+hash, hdr(b), nil); !strings.Contains(string(body), `"present":false`) {
		t.Fatalf("tenant B sees A's staged files: %s", body)
	}
	spec := func(steps string) []byte {
		return []byte(`{"fromImage":"` + ref + `","steps":[` + steps + `]}`)
	}
	copyAll := `{"type":"COPY","args":[".","/ctx","",""],"filesHash":"` + hash + `"}`
	check := `{"type":"RUN","args":["cd /ctx && echo $(cat ok/f.txt escape.txt abs/x.txt) > out.txt && echo $(ls /) > root.txt"]}`
	path := "/v2/templates/" + tpl + "/builds/" + build
	// Tenant B cannot start, nor see, A's build.
	if st, _, body = s.do(t, "POST", path, hdr(b), spec(copyAll)); st != http.StatusNotFound {
		t.Errorf("tenant B started A's build: %d %s", st, body)
	}
	if st, v := status(b, tpl, build); st != http.StatusNotFound {
		t.Errorf("tenant B sees A's build: %d %v", st, v)
	}
	// A COPY whose files are not staged: refused before anything runs.
	missing := `{"type":"COPY","args":["x","/x","",""],"filesHash":"` + strings.Repeat("cd", 32) + `"}`
	if st, _, body = s.do(t, "POST", path, hdr(a), spec(missing)); st != http.StatusBadRequest || !strings.Contains(string(body), "not uploaded") {
		t.Errorf("a COPY of files never uploaded: %d %s", st, body)
	}
	if st, _, body = s.do(t, "POST", path, hdr(a), spec(copyAll+","+check)); st != http.StatusAccepted {
		t.Fatalf("start: %d %s", st, body)
	}
	if st, _, body = s.do(t, "POST", path, hdr(a), spec(copyAll)); st != http.StatusConflict {
		t.Errorf("a second start of one build: %d %s", st, body)
	}
	if v := wait(a, tpl, build); v["status"] != "ready" {
		t.Fatalf("build: %v", v)
	}
	sb := s.create(t, a, `{"templateID":"api-built"}`)
	if sb.TemplateID != "api-built" {
		t.Fatalf("created from %q", sb.TemplateID)
	}
	got := map[string]string{}
	for _, f := range []string{"/ctx/out.txt", "/ctx/root.txt"} {
		st, _, body := s.do(t, "GET", "/files?path="+f+"&username=root", envdHeaders(sb.SandboxID, sb.EnvdAccessToken), nil)
		if st != http.StatusOK {
			t.Fatalf("read %s: %d %s", f, st, body)
		}
		got[f] = string(body)
	}
	if got["/ctx/out.txt"] != "fine climbed abs\n" || strings.Contains(got["/ctx/root.txt"], "escape") || strings.Contains(got["/ctx/root.txt"], "abs") {
		t.Fatalf("the hostile names did not stay inside the COPY: %q", got)
	}
	// Tenant B cannot start a sandbox from A's template: the name gives
	// it the default template instead.
	if bsb := s.create(t, b, `{"templateID":"api-built"}`); bsb.TemplateID == "api-built" {
		t.Fatal("tenant B started A's template")
	}
	if st, _, _ := s.do(t, "GET", "/templates/aliases/api-built", hdr(b), nil); st != http.StatusNotFound {
		t.Errorf("tenant B sees A's template alias: %d", st)
	}
	if st, _, _ := s.do(t, "GET", "/templates/aliases/api-built", hdr(a), nil); st != http.StatusOK {
		t.Errorf("A's own alias: %d", st)
	}

	// At most two builds of a tenant at once.
	slow := `{"type":"RUN","args":["sleep 5"]}`
	var started int
	for i := 0; i < 3; i++ {
		tpl, build := open(a, "slow")
		st, _, body := s.do(t, "POST", "/v2/templates/"+tpl+"/builds/"+build, hdr(a), []byte(`{"fromImage":"`+ref+`","force":true,"steps":[`+slow+`]}`))
		switch st {
		case http.StatusAccepted:
			started++
		case http.StatusTooManyRequests, http.StatusConflict, http.StatusUnprocessableEntity:
			if !strings.Contains(string(body), "at most 2") {
				t.Errorf("the third build's refusal: %d %s", st, body)
			}
		default:
			t.Errorf("build %d: %d %s", i, st, body)
		}
	}
	if started != 2 {
		t.Errorf("%d builds of one tenant started at once, want 2", started)
	}
}
