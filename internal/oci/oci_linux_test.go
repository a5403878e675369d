package oci_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/layers"
	"github.com/paddockhq/paddock/internal/oci"
	"github.com/paddockhq/paddock/internal/oci/ocitest"
)

func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: layers are unpacked with their owners")
	}
}

func baseTar(t *testing.T) []byte {
	return ocitest.LayerTar(t, map[string]ocitest.File{
		"etc/":           {Dir: true},
		"etc/os-release": {Body: "ID=paddock-test\n"},
		"bin/":           {Dir: true},
		"bin/hello":      {Body: "#!/bin/sh\necho hello\n", Mode: 0o755},
	})
}

func appTar(t *testing.T) []byte {
	return ocitest.LayerTar(t, map[string]ocitest.File{
		"app/":          {Dir: true},
		"app/main.py":   {Body: "print('hi')\n"},
		"etc/.wh.motd":  {},
		"home/":         {Dir: true},
		"home/user/":    {Dir: true, UID: 1000},
		"home/user/.rc": {Body: "export X=1\n", UID: 1000},
	})
}

var testCfg = v1.Config{
	Env:          []string{"PATH=/usr/bin:/bin", "APP=1"},
	WorkingDir:   "/app",
	User:         "1000:1000",
	ExposedPorts: map[string]struct{}{"8080/tcp": {}},
	Entrypoint:   []string{"python3"},
	Cmd:          []string{"main.py"},
	Labels:       map[string]string{"org.example": "yes"},
}

type env struct {
	reg    *ocitest.Registry
	client *oci.Client
	store  *layers.Store
	dir    string
}

func newEnv(t *testing.T, o oci.Options) *env {
	t.Helper()
	requireRoot(t)
	reg := ocitest.Start(t)
	creds, err := oci.DockerConfig(reg.DockerConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	if o.Credentials == nil {
		o.Credentials = creds
	}
	if o.Insecure == nil {
		o.Insecure = []string{reg.Host}
	}
	c, err := oci.New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	dir := t.TempDir()
	st, err := layers.Open(layers.Options{Dir: filepath.Join(dir, "store")})
	if err != nil {
		t.Fatal(err)
	}
	return &env{reg: reg, client: c, store: st, dir: dir}
}

func (e *env) pull(t *testing.T, ref string) ([]layers.Layer, *oci.Image, error) {
	t.Helper()
	img, err := e.client.Pull(context.Background(), ref)
	if err != nil {
		return nil, nil, err
	}
	lease := e.store.NewLease()
	defer lease.Release()
	ls, err := e.client.Unpack(context.Background(), img, e.store, lease, oci.UnpackOptions{})
	return ls, img, err
}

func readIn(t *testing.T, ls []layers.Layer, p string) string {
	t.Helper()
	for i := len(ls) - 1; i >= 0; i-- {
		if b, err := os.ReadFile(filepath.Join(ls[i].Dir, p)); err == nil {
			return string(b)
		}
	}
	t.Fatalf("%s in no layer", p)
	return ""
}

func TestPullUnpack(t *testing.T) {
	e := newEnv(t, oci.Options{})
	for _, mt := range []types.MediaType{types.OCILayer, types.OCILayerZStd, types.DockerLayer} {
		t.Run(string(mt), func(t *testing.T) {
			ref := e.reg.Ref("app:" + strings.NewReplacer(".", "-", "+", "-", "/", "-").Replace(string(mt))[len("application-vnd-"):])
			e.reg.Push(t, ref, ocitest.Image(t, testCfg, mt, baseTar(t), appTar(t)))
			ls, img, err := e.pull(t, ref)
			if err != nil {
				t.Fatal(err)
			}
			if len(ls) != 2 || readIn(t, ls, "etc/os-release") != "ID=paddock-test\n" || readIn(t, ls, "app/main.py") != "print('hi')\n" {
				t.Fatalf("unexpected layers %+v", ls)
			}
			if img.Config.Config.WorkingDir != "/app" || img.Config.Config.User != "1000:1000" {
				t.Fatalf("config lost: %+v", img.Config.Config)
			}
			if strings.Contains(img.Ref, e.reg.Password) {
				t.Fatal("credential in the image metadata")
			}
		})
	}
	// The same base under three media types is three different diff ids?
	// No: the diff id is of the uncompressed tar, so it is stored once.
	if u := e.store.Usage(); u.Layers != 2 {
		t.Fatalf("store holds %d layers, want 2 (base and app, shared across compressions)", u.Layers)
	}
	// Pull by digest.
	img, err := e.client.Pull(context.Background(), e.reg.Ref("app:oci-image-layer-v1-tar-zstd"))
	if err != nil {
		t.Fatal(err)
	}
	byDigest := e.reg.Ref("app@" + img.Digest)
	if _, _, err := e.pull(t, byDigest); err != nil {
		t.Fatalf("pull by digest: %v", err)
	}
}

func TestPullAuthAndTransportErrors(t *testing.T) {
	e := newEnv(t, oci.Options{})
	ref := e.reg.Ref("app:1")
	e.reg.Push(t, ref, ocitest.Image(t, testCfg, types.OCILayer, baseTar(t)))
	wrong, _ := oci.ParseDockerConfig([]byte(`{"auths":{"` + e.reg.Host + `":{"username":"tester","password":"not-it-s3cret"}}}`))
	slow := slowServer(t)
	closed := closedAddr(t)
	cases := []struct {
		name string
		o    oci.Options
		ref  string
		code errs.Code
		is   error
	}{
		{"anonymous", oci.Options{Credentials: func(context.Context, string) (oci.Credential, error) { return oci.Credential{}, nil }, Insecure: []string{e.reg.Host}}, ref, errs.CodeUnauthenticated, nil},
		{"wrong-password", oci.Options{Credentials: wrong, Insecure: []string{e.reg.Host}}, ref, errs.CodeUnauthenticated, nil},
		{"plain-http-not-named", oci.Options{Insecure: []string{}}, ref, errs.CodeInvalid, oci.ErrPlainHTTP},
		{"not-found", oci.Options{}, e.reg.Ref("nope:1"), errs.CodeNotFound, nil},
		{"unreachable", oci.Options{Insecure: []string{closed}, DialTimeout: time.Second}, closed + "/x:1", errs.CodeUnavailable, nil},
		{"slow-headers", oci.Options{Insecure: []string{slow}, DialTimeout: 300 * time.Millisecond, HeaderTimeout: 300 * time.Millisecond}, slow + "/x:1", errs.CodeTimeout, nil},
		{"bad-ref", oci.Options{}, "UPPER/Case::x", errs.CodeInvalid, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := c.o
			if o.Credentials == nil {
				o.Credentials, _ = oci.DockerConfig(e.reg.DockerConfig(t))
			}
			if o.Insecure == nil {
				o.Insecure = []string{e.reg.Host}
			}
			cl, err := oci.New(o)
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			start := time.Now()
			_, err = cl.Pull(context.Background(), c.ref)
			if errs.CodeOf(err) != c.code || c.is != nil && !errors.Is(err, c.is) {
				t.Fatalf("err = %v (%s), want %s", err, errs.CodeOf(err), c.code)
			}
			if time.Since(start) > 20*time.Second {
				t.Fatalf("took %s", time.Since(start))
			}
			if strings.Contains(err.Error(), "not-it-s3cret") || strings.Contains(err.Error(), e.reg.Password) {
				t.Fatal("a credential leaked into an error")
			}
		})
	}
}

// slowServer accepts connections and never answers.
func slowServer(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() })
		}
	}()
	return l.Addr().String()
}

func closedAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a := l.Addr().String()
	l.Close()
	return a
}

// TestStalledBody: a registry that sends headers and then nothing.
func TestStalledBody(t *testing.T) {
	requireRoot(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v2/" {
			return
		}
		w.Header().Set("Content-Type", string(types.OCIManifestSchema1))
		w.Header().Set("Content-Length", "1000")
		w.WriteHeader(200)
		w.Write([]byte(`{"schemaVersion":`))
		w.(http.Flusher).Flush()
		select {
		case <-stop:
		case <-r.Context().Done():
		}
	})}
	go srv.Serve(l)
	t.Cleanup(func() { close(stop); srv.Close() })
	host := l.Addr().String()
	cl, _ := oci.New(oci.Options{Insecure: []string{host}, StallTimeout: 300 * time.Millisecond})
	defer cl.Close()
	_, err = cl.Pull(context.Background(), host+"/x:1")
	if errs.CodeOf(err) != errs.CodeTimeout {
		t.Fatalf("err = %v (%s), want a timeout", err, errs.CodeOf(err))
	}
}

func TestPullMultiArch(t *testing.T) {
	e := newEnv(t, oci.Options{})
	mine := ocitest.Image(t, testCfg, types.OCILayer, baseTar(t))
	otherCfg, _ := mine.ConfigFile()
	otherCfg = otherCfg.DeepCopy()
	otherCfg.Architecture = "s390x"
	other, _ := mutate.ConfigFile(ocitest.Image(t, testCfg, types.OCILayer, appTar(t)), otherCfg)
	hostP := v1.Platform{OS: "linux", Architecture: hostArch()}
	idx := mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.OCIImageIndex),
		mutate.IndexAddendum{Add: other, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: "s390x"}}},
		mutate.IndexAddendum{Add: mine, Descriptor: v1.Descriptor{Platform: &hostP}},
	)
	ref := e.reg.Ref("multi:1")
	e.reg.PushIndex(t, ref, idx)
	ls, _, err := e.pull(t, ref)
	if err != nil {
		t.Fatal(err)
	}
	if len(ls) != 1 || readIn(t, ls, "etc/os-release") == "" {
		t.Fatal("did not pick the host's platform")
	}
	cl, _ := oci.New(oci.Options{Insecure: []string{e.reg.Host}, Platform: "linux/riscv64", Credentials: mustCreds(t, e)})
	defer cl.Close()
	if _, err := cl.Pull(context.Background(), ref); errs.CodeOf(err) != errs.CodeNotFound || !strings.Contains(errs.Public(err), "linux/s390x") {
		t.Fatalf("missing platform: %v", err)
	}
}

func mustCreds(t *testing.T, e *env) oci.CredentialFunc {
	c, err := oci.DockerConfig(e.reg.DockerConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestPullTampered: the registry's stored blob is changed after push; the
// pull is refused and nothing stays in the store once the lease is gone.
func TestPullTampered(t *testing.T) {
	e := newEnv(t, oci.Options{})
	img := ocitest.Image(t, testCfg, types.OCILayer, baseTar(t), appTar(t))
	ref := e.reg.Ref("tampered:1")
	e.reg.Push(t, ref, img)
	ls, _ := img.Layers()
	dg, _ := ls[1].Digest()
	p := e.reg.BlobPath(dg.String())
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0xff
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err = e.pull(t, ref)
	if errs.CodeOf(err) != errs.CodeInvalid {
		t.Fatalf("err = %v (%s), want a refused blob", err, errs.CodeOf(err))
	}
	if !errors.Is(err, oci.ErrBlobDigest) && !errors.Is(err, layers.ErrBadArchive) && !errors.Is(err, layers.ErrDigest) {
		t.Fatalf("err = %v: not a digest refusal", err)
	}
	if _, ok := e.store.Get(mustDiffID(t, ls[1])); ok {
		t.Fatal("tampered layer stored")
	}
	e.store.GC()
	if u := e.store.Usage(); u.Layers != 0 {
		t.Fatalf("%d layers left after a refused pull", u.Layers)
	}
}

func mustDiffID(t *testing.T, l v1.Layer) string {
	d, err := l.DiffID()
	if err != nil {
		t.Fatal(err)
	}
	return d.String()
}

// hostileRegistry proxies to the real registry and rewrites manifests
// on their way back: the real registry refuses to store such lies, a
// hostile one serves them.
func hostileRegistry(t *testing.T, upstream string, rewrite func([]byte) []byte) string {
	t.Helper()
	u, _ := url.Parse("http://" + upstream)
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.ModifyResponse = func(resp *http.Response) error {
		if !strings.Contains(resp.Request.URL.Path, "/manifests/") || resp.StatusCode != 200 || resp.Request.Method != http.MethodGet {
			return nil
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		body = rewrite(body)
		resp.Body = io.NopCloser(bytes.NewReader(body))
		resp.ContentLength = int64(len(body))
		resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
		resp.Header.Del("Docker-Content-Digest")
		return nil
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: rp}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return l.Addr().String()
}

// TestPullBadManifests: lies in a manifest are refused.
func TestPullBadManifests(t *testing.T) {
	e := newEnv(t, oci.Options{})
	img := ocitest.Image(t, testCfg, types.OCILayer, baseTar(t))
	e.reg.Push(t, e.reg.Ref("good:1"), img)
	cases := []struct {
		name   string
		mutate func(m *v1.Manifest)
		code   errs.Code
		is     error
	}{
		{"control", func(m *v1.Manifest) {}, "", nil},
		{"layer-size-short", func(m *v1.Manifest) { m.Layers[0].Size -= 10 }, errs.CodeInvalid, oci.ErrBlobDigest},
		{"layer-size-long", func(m *v1.Manifest) { m.Layers[0].Size += 10 }, errs.CodeInvalid, oci.ErrBlobDigest},
		{"layer-digest", func(m *v1.Manifest) { m.Layers[0].Digest = m.Config.Digest; m.Layers[0].Size = m.Config.Size }, errs.CodeInvalid, nil},
		{"layer-media-type", func(m *v1.Manifest) { m.Layers[0].MediaType = "application/vnd.example.not-a-layer" }, errs.CodeInvalid, nil},
		{"nondistributable", func(m *v1.Manifest) { m.Layers[0].MediaType = types.OCIRestrictedLayer }, errs.CodeUnsupported, nil},
		{"config-media-type", func(m *v1.Manifest) { m.Config.MediaType = "application/vnd.example.config" }, errs.CodeInvalid, nil},
		{"config-size", func(m *v1.Manifest) { m.Config.Size++ }, errs.CodeInvalid, nil},
		{"manifest-media-type", func(m *v1.Manifest) { m.MediaType = "application/vnd.example.manifest" }, errs.CodeInvalid, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			host := hostileRegistry(t, e.reg.Host, func(b []byte) []byte {
				var m v1.Manifest
				if err := json.Unmarshal(b, &m); err != nil {
					t.Errorf("upstream manifest: %v", err)
					return b
				}
				c.mutate(&m)
				out, _ := json.Marshal(m)
				return out
			})
			creds, _ := oci.ParseDockerConfig([]byte(`{"auths":{"` + host + `":{"username":"` + e.reg.User + `","password":"` + e.reg.Password + `"}}}`))
			cl, _ := oci.New(oci.Options{Insecure: []string{host}, Credentials: creds})
			defer cl.Close()
			st, _ := layers.Open(layers.Options{Dir: t.TempDir()})
			lease := st.NewLease()
			defer lease.Release()
			pulled, err := cl.Pull(context.Background(), host+"/good:1")
			if err == nil {
				_, err = cl.Unpack(context.Background(), pulled, st, lease, oci.UnpackOptions{})
			}
			if c.code == "" {
				if err != nil {
					t.Fatalf("positive control through the proxy: %v", err)
				}
				return
			}
			if errs.CodeOf(err) != c.code || c.is != nil && !errors.Is(err, c.is) {
				t.Fatalf("err = %v (%s), want %s", err, errs.CodeOf(err), c.code)
			}
			lease.Release()
			st.GC()
			if u := st.Usage(); u.Layers != 0 {
				t.Fatalf("%d layers stored from a lying manifest", u.Layers)
			}
		})
	}
}

// TestArchives: docker-save, oci-layout and oci-archive made by Debian's
// skopeo from the registry import to the same layers; the store's own
// export reads back.
func TestArchives(t *testing.T) {
	e := newEnv(t, oci.Options{})
	if _, err := exec.LookPath("skopeo"); err != nil {
		t.Skip("skopeo not installed (apt-get install skopeo)")
	}
	ref := e.reg.Ref("arch:1")
	e.reg.Push(t, ref, ocitest.Image(t, testCfg, types.OCILayer, baseTar(t), appTar(t)))
	dir := t.TempDir()
	targets := map[string]string{
		oci.KindDockerSave: "docker-archive:" + filepath.Join(dir, "save.tar") + ":arch:1",
		oci.KindOCILayout:  "oci:" + filepath.Join(dir, "layout") + ":1",
		oci.KindOCIArchive: "oci-archive:" + filepath.Join(dir, "oci.tar") + ":1",
	}
	paths := map[string]string{
		oci.KindDockerSave: filepath.Join(dir, "save.tar"),
		oci.KindOCILayout:  filepath.Join(dir, "layout"),
		oci.KindOCIArchive: filepath.Join(dir, "oci.tar"),
	}
	for kind, dst := range targets {
		out, err := exec.Command("skopeo", "copy", "--quiet", "--src-tls-verify=false",
			"--src-creds", e.reg.User+":"+e.reg.Password, "docker://"+ref, dst).CombinedOutput()
		if err != nil {
			t.Fatalf("skopeo copy to %s: %v\n%s", kind, err, out)
		}
	}
	for kind, p := range paths {
		t.Run(kind, func(t *testing.T) {
			a, err := e.client.OpenArchive(p, "", e.dir)
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			if a.Kind != kind {
				t.Fatalf("kind = %s", a.Kind)
			}
			st, err := layers.Open(layers.Options{Dir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			lease := st.NewLease()
			defer lease.Release()
			ls, err := e.client.Unpack(context.Background(), a.Image, st, lease, oci.UnpackOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if readIn(t, ls, "app/main.py") != "print('hi')\n" || a.Image.Config.Config.WorkingDir != "/app" {
				t.Fatal("archive content lost")
			}
		})
	}
	t.Run("export-roundtrip", func(t *testing.T) {
		ls, img, err := e.pull(t, ref)
		if err != nil {
			t.Fatal(err)
		}
		ex, err := oci.StoreImage(context.Background(), ls, *img.Config, e.dir)
		if err != nil {
			t.Fatal(err)
		}
		defer ex.Close()
		p := filepath.Join(t.TempDir(), "export.tar")
		f, _ := os.Create(p)
		if err := oci.WriteOCIArchive(f, ex.Image, "exported"); err != nil {
			t.Fatal(err)
		}
		f.Close()
		// Debian's skopeo reads what we wrote.
		if out, err := exec.Command("skopeo", "inspect", "oci-archive:"+p).CombinedOutput(); err != nil {
			t.Fatalf("skopeo inspect: %v\n%s", err, out)
		}
		a, err := e.client.OpenArchive(p, "exported", e.dir)
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		if len(a.Image.Layers) != 2 || a.Image.Config.Config.User != "1000:1000" {
			t.Fatal("export lost layers or config")
		}
		// Push the export and pull it back.
		if err := e.client.Push(context.Background(), e.reg.Ref("pushed:1"), ex.Image); err != nil {
			t.Fatal(err)
		}
		ls2, _, err := e.pull(t, e.reg.Ref("pushed:1"))
		if err != nil {
			t.Fatal(err)
		}
		if readIn(t, ls2, "home/user/.rc") != "export X=1\n" {
			t.Fatal("pushed image lost content")
		}
	})
	t.Run("garbage", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "x.tar")
		os.WriteFile(p, []byte("not a tar at all, not at all"), 0o644)
		if _, err := e.client.OpenArchive(p, "", e.dir); errs.CodeOf(err) != errs.CodeInvalid {
			t.Fatalf("err = %v", err)
		}
	})
}

// TestPullBearer: the registry uses token auth; the client trades the
// config.json credentials for a bearer token and pulls.
func TestPullBearer(t *testing.T) {
	requireRoot(t)
	reg := ocitest.Start(t, ocitest.Bearer())
	ref := reg.Ref("app:bearer")
	reg.Push(t, ref, ocitest.Image(t, testCfg, types.OCILayer, baseTar(t)))
	creds, err := oci.DockerConfig(reg.DockerConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	before := reg.TokensIssued.Load()
	cl, _ := oci.New(oci.Options{Credentials: creds, Insecure: []string{reg.Host}})
	defer cl.Close()
	img, err := cl.Pull(context.Background(), ref)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := layers.Open(layers.Options{Dir: t.TempDir()})
	lease := st.NewLease()
	defer lease.Release()
	if _, err := cl.Unpack(context.Background(), img, st, lease, oci.UnpackOptions{}); err != nil {
		t.Fatal(err)
	}
	if reg.TokensIssued.Load() == before {
		t.Fatal("no bearer token was issued: not the token flow")
	}
	wrong, _ := oci.ParseDockerConfig([]byte(`{"auths":{"` + reg.Host + `":{"username":"tester","password":"wrong-s3cret"}}}`))
	cl2, _ := oci.New(oci.Options{Credentials: wrong, Insecure: []string{reg.Host}})
	defer cl2.Close()
	_, err = cl2.Pull(context.Background(), ref)
	if errs.CodeOf(err) != errs.CodeUnauthenticated || strings.Contains(err.Error(), "wrong-s3cret") {
		t.Fatalf("wrong password: %v (%s)", err, errs.CodeOf(err))
	}
}
