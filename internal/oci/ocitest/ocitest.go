// Package ocitest starts a real registry for tests — Debian's
// docker-registry (the CNCF distribution registry) on 127.0.0.1 at a free
// port, with filesystem storage and htpasswd (bcrypt) auth — and builds
// small images to push to it with go-containerregistry.
package ocitest

import (
	"archive/tar"
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Registry is a running docker-registry.
type Registry struct {
	Host     string // "127.0.0.1:PORT"
	User     string
	Password string
	Dir      string // storage root
	// TokensIssued counts bearer tokens the token server (Bearer) issued.
	TokensIssued atomic.Int32
}

// Option configures Start.
type Option func(*startOpts)

type startOpts struct{ bearer bool }

// Bearer makes the registry use token auth: a token server (ours, on
// loopback) checks the user's password and issues ES256 JWTs that the
// registry verifies, so clients go through the Bearer flow.
func Bearer() Option { return func(o *startOpts) { o.bearer = true } }

// Start runs docker-registry until the test ends; it skips the test when
// the binary is missing (apt-get install docker-registry).
func Start(t testing.TB, opts ...Option) *Registry {
	t.Helper()
	var so startOpts
	for _, o := range opts {
		o(&so)
	}
	bin, err := exec.LookPath("docker-registry")
	if err != nil {
		t.Skip("docker-registry not installed (apt-get install docker-registry)")
	}
	dir := t.TempDir()
	r := &Registry{User: "tester", Password: randHex(12), Dir: filepath.Join(dir, "storage")}
	hash, err := bcrypt.GenerateFromPassword([]byte(r.Password), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	htpasswd := filepath.Join(dir, "htpasswd")
	if err := os.WriteFile(htpasswd, []byte(r.User+":"+string(hash)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	authCfg := fmt.Sprintf("auth:\n  htpasswd:\n    realm: paddock-test\n    path: %s\n", htpasswd)
	var front net.Listener
	var token http.Handler
	if so.bearer {
		var err error
		if front, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
		authCfg, token = tokenAuth(t, r, dir, front.Addr().String())
	}
	for attempt := 0; ; attempt++ {
		r.Host = freeAddr(t)
		cfg := fmt.Sprintf(`version: 0.1
log:
  level: error
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: %s
  delete:
    enabled: true
http:
  addr: %s
  secret: %s
%s`, r.Dir, r.Host, randHex(16), authCfg)
		cfgPath := filepath.Join(dir, "config.yml")
		if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, "serve", cfgPath)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		if waitReady(r.Host, done) {
			t.Cleanup(func() {
				cmd.Process.Kill()
				<-done
			})
			if front != nil {
				serveFront(t, front, token, r.Host)
				r.Host = front.Addr().String()
			}
			return r
		}
		cmd.Process.Kill()
		<-done
		if attempt == 2 {
			t.Fatalf("docker-registry did not start: %s", out.String())
		}
	}
}

func waitReady(host string, done chan struct{}) bool {
	deadline := time.Now().Add(10 * time.Second)
	c := &http.Client{Timeout: time.Second}
	for time.Now().Before(deadline) {
		select {
		case <-done:
			return false
		default:
		}
		resp, err := c.Get("http://" + host + "/v2/")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusOK {
				return true
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

func freeAddr(t testing.TB) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func randHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// DockerConfig writes a config.json holding the registry's credentials
// and returns its path.
func (r *Registry) DockerConfig(t testing.TB) string {
	t.Helper()
	auth := base64.StdEncoding.EncodeToString([]byte(r.User + ":" + r.Password))
	p := filepath.Join(t.TempDir(), "config.json")
	data := fmt.Sprintf(`{"auths":{%q:{"auth":%q}}}`, r.Host, auth)
	if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// Ref returns "HOST/repo".
func (r *Registry) Ref(repo string) string { return r.Host + "/" + repo }

// Push uploads img to ref (on this registry) with its credentials.
func (r *Registry) Push(t testing.TB, ref string, img v1.Image) {
	t.Helper()
	pr, err := name.ParseReference(ref, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(pr, img, remote.WithAuth(&authn.Basic{Username: r.User, Password: r.Password})); err != nil {
		t.Fatal(err)
	}
}

// PushIndex uploads an index to ref.
func (r *Registry) PushIndex(t testing.TB, ref string, idx v1.ImageIndex) {
	t.Helper()
	pr, err := name.ParseReference(ref, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.WriteIndex(pr, idx, remote.WithAuth(&authn.Basic{Username: r.User, Password: r.Password})); err != nil {
		t.Fatal(err)
	}
}

// BlobPath is where the registry keeps blob digest on disk (to tamper
// with it).
func (r *Registry) BlobPath(digest string) string {
	h := strings.TrimPrefix(digest, "sha256:")
	return filepath.Join(r.Dir, "docker/registry/v2/blobs/sha256", h[:2], h, "data")
}

// File is one file of a test layer.
type File struct {
	Body string
	Mode int64 // default 0644; a directory when Dir
	Dir  bool
	Link string // symlink target
	UID  int
}

// LayerTar makes a layer tar from files (sorted by path).
func LayerTar(t testing.TB, files map[string]File) []byte {
	t.Helper()
	var names []string
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, n := range names {
		f := files[n]
		h := &tar.Header{Name: n, Mode: f.Mode, Uid: f.UID, Gid: f.UID, ModTime: time.Unix(1700000000, 0)}
		switch {
		case f.Dir:
			h.Typeflag = tar.TypeDir
			if h.Mode == 0 {
				h.Mode = 0o755
			}
		case f.Link != "":
			h.Typeflag, h.Linkname = tar.TypeSymlink, f.Link
		default:
			h.Typeflag, h.Size = tar.TypeReg, int64(len(f.Body))
			if h.Mode == 0 {
				h.Mode = 0o644
			}
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		io.WriteString(tw, f.Body)
	}
	tw.Close()
	return buf.Bytes()
}

// Image builds an image from layer tars (bottom first), each compressed
// as mt (types.OCILayer, types.OCILayerZStd, types.DockerLayer ...), with
// cfg as its config.
func Image(t testing.TB, cfg v1.Config, mt types.MediaType, layerTars ...[]byte) v1.Image {
	t.Helper()
	img := empty.Image
	if mt == types.DockerLayer {
		img = mutate.MediaType(img, types.DockerManifestSchema2)
		img = mutate.ConfigMediaType(img, types.DockerConfigJSON)
	} else {
		img = mutate.MediaType(img, types.OCIManifestSchema1)
		img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	}
	for _, lt := range layerTars {
		lt := lt
		opts := []tarball.LayerOption{tarball.WithMediaType(mt)}
		if mt == types.OCILayerZStd {
			opts = append(opts, tarball.WithCompression("zstd"))
		}
		l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(lt)), nil }, opts...)
		if err != nil {
			t.Fatal(err)
		}
		if img, err = mutate.AppendLayers(img, l); err != nil {
			t.Fatal(err)
		}
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cf = cf.DeepCopy()
	cf.Config = cfg
	cf.OS, cf.Architecture = "linux", hostArch()
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		t.Fatal(err)
	}
	return img
}
