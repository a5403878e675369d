package dockerfile_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

const tenSteps = `FROM %s
ENV A=1
WORKDIR /app
COPY a.txt .
RUN echo one > one
RUN echo two > two
COPY b.txt .
RUN cat a.txt b.txt > ab
USER app
RUN id > /tmp/id
CMD ["sh"]
`

// BenchmarkCachedRebuild rebuilds an unchanged 10-step Dockerfile (the
// first build is outside the timer) and installs it as a template;
// beside it, Debian's buildah bud --layers --isolation chroot does the
// same cached rebuild for reference.
func BenchmarkCachedRebuild(b *testing.B) {
	e := newBuildEnv(b, nil)
	cdir := b.TempDir()
	os.WriteFile(filepath.Join(cdir, "a.txt"), []byte("a\n"), 0o644)
	os.WriteFile(filepath.Join(cdir, "b.txt"), []byte("b\n"), 0o644)
	df := fmt.Sprintf(tenSteps, e.base)
	ctx := context.Background()
	b.Run("paddock", func(b *testing.B) {
		if _, _, err := e.build(b, ctx, df, cdir, nil, "bench"); err != nil {
			b.Fatal(err)
		}
		runs := e.runner.n.Load()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if _, _, err := e.build(b, ctx, df, cdir, nil, "bench"); err != nil {
				b.Fatal(err)
			}
		}
		if e.runner.n.Load() != runs {
			b.Fatal("the rebuild ran steps: not cached")
		}
	})
	b.Run("buildah", func(b *testing.B) {
		if _, err := exec.LookPath("buildah"); err != nil {
			b.Skip("buildah not installed")
		}
		root := b.TempDir()
		os.WriteFile(filepath.Join(cdir, "Dockerfile"), []byte(df), 0o644)
		bud := func() {
			cmd := exec.Command("buildah", "--root", filepath.Join(root, "root"), "--runroot", filepath.Join(root, "run"),
				"--storage-driver", "overlay", "bud", "--layers", "--isolation", "chroot", "--tls-verify=false",
				"--creds", e.reg.User+":"+e.reg.Password, "-q", "-t", "bench", "-f", filepath.Join(cdir, "Dockerfile"), cdir)
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("buildah: %v\n%s", err, out)
			}
		}
		bud()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			bud()
		}
		b.StopTimer()
		exec.Command("buildah", "--root", filepath.Join(root, "root"), "--runroot", filepath.Join(root, "run"), "--storage-driver", "overlay", "rmi", "-a", "-f").Run()
		exec.Command("umount", "-R", filepath.Join(root, "root", "overlay")).Run()
	})
}
