package oci_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/paddockhq/paddock/internal/layers"
	"github.com/paddockhq/paddock/internal/oci"
	"github.com/paddockhq/paddock/internal/oci/ocitest"
)

// BenchmarkPullUnpack pulls and unpacks a ~200 MB image (two gzip
// layers of the host's own libraries) from a local docker-registry, and
// beside it does the same with Debian's skopeo copy + umoci unpack.
func BenchmarkPullUnpack(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("needs root")
	}
	for _, tool := range []string{"skopeo", "umoci"} {
		if _, err := exec.LookPath(tool); err != nil {
			b.Skipf("%s not installed", tool)
		}
	}
	reg := ocitest.Start(b)
	img := ocitest.Image(b, v1.Config{}, types.OCILayer,
		ocitest.HostTar(b, "/usr/lib/x86_64-linux-gnu", "usr/lib/x86_64-linux-gnu", 140<<20),
		ocitest.HostTar(b, "/usr/lib/python3.11", "usr/lib/python3.11", 60<<20))
	ref := reg.Ref("big:1")
	reg.Push(b, ref, img)
	creds, _ := oci.DockerConfig(reg.DockerConfig(b))
	c, err := oci.New(oci.Options{Credentials: creds, Insecure: []string{reg.Host}})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	work := b.TempDir()
	b.Run("paddock", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			dir := filepath.Join(work, "store")
			st, err := layers.Open(layers.Options{Dir: dir})
			if err != nil {
				b.Fatal(err)
			}
			pulled, err := c.Pull(context.Background(), ref)
			if err != nil {
				b.Fatal(err)
			}
			lease := st.NewLease()
			ls, err := c.Unpack(context.Background(), pulled, st, lease, oci.UnpackOptions{})
			if err != nil {
				b.Fatal(err)
			}
			lease.Release()
			b.StopTimer()
			var sz int64
			for _, l := range ls {
				sz += l.Size
			}
			b.ReportMetric(float64(sz)/(1<<20), "MB_uncompressed")
			os.RemoveAll(dir)
			b.StartTimer()
		}
	})
	b.Run("skopeo+umoci", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			layout, bundle := filepath.Join(work, "layout"), filepath.Join(work, "bundle")
			if out, err := exec.Command("skopeo", "copy", "--quiet", "--src-tls-verify=false", "--src-creds", reg.User+":"+reg.Password,
				"docker://"+ref, "oci:"+layout+":1").CombinedOutput(); err != nil {
				b.Fatalf("skopeo: %v %s", err, out)
			}
			if out, err := exec.Command("umoci", "unpack", "--image", layout+":1", bundle).CombinedOutput(); err != nil {
				b.Fatalf("umoci: %v %s", err, out)
			}
			b.StopTimer()
			os.RemoveAll(layout)
			os.RemoveAll(bundle)
			b.StartTimer()
		}
	})
}
