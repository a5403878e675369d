//go:build linux

package kubetest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"golang.org/x/sync/errgroup"

	"github.com/paddockhq/paddock/internal/runtime/kube/image"
)

// pushBaseImages builds and pushes the pause and busybox images.
func (c *Cluster) pushBaseImages(ctx context.Context) error {
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		bin := filepath.Join(c.Dir, "images", "pause")
		if err := GoBuild(ctx, bin, "github.com/paddockhq/paddock/internal/runtime/kube/kubetest/pause"); err != nil {
			return fmt.Errorf("pause image: %w", err)
		}
		data, err := os.ReadFile(bin)
		if err != nil {
			return err
		}
		img, err := image.Build([]image.File{{Path: "pause", Mode: 0o755, Data: data}}, v1.Config{Entrypoint: []string{"/pause"}})
		if err != nil {
			return err
		}
		_, err = image.Push(ctx, c.PauseImage, img, true)
		return err
	})
	g.Go(func() error {
		img, err := BusyboxImage()
		if err != nil {
			return err
		}
		_, err = image.Push(ctx, c.BusyboxImage, img, true)
		return err
	})
	return g.Wait()
}

// PushImage pushes img to repo (a path in the cluster's registry, e.g.
// "tests/foo:1") and returns the reference pods use, pinned by digest.
func (c *Cluster) PushImage(ctx context.Context, repo string, img v1.Image) (string, error) {
	return image.Push(ctx, c.Registry+"/"+repo, img, true)
}

// BusyboxImage is a static busybox (Debian's busybox-static) with every
// applet linked in /bin, a passwd with root and user (1000), /tmp and
// /home/user.
func BusyboxImage() (v1.Image, error) {
	bb, err := exec.LookPath("busybox")
	if err != nil {
		return nil, fmt.Errorf("busybox image: %w (apt-get install busybox-static)", err)
	}
	data, err := os.ReadFile(bb)
	if err != nil {
		return nil, err
	}
	out, err := exec.Command(bb, "--list").Output()
	if err != nil {
		return nil, fmt.Errorf("busybox --list: %w", err)
	}
	files := []image.File{
		{Path: "bin", Mode: os.ModeDir | 0o755},
		{Path: "bin/busybox", Mode: 0o755, Data: data},
		{Path: "etc", Mode: os.ModeDir | 0o755},
		{Path: "etc/passwd", Mode: 0o644, Data: []byte("root:x:0:0:root:/root:/bin/sh\nuser:x:1000:1000:user:/home/user:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n")},
		{Path: "etc/group", Mode: 0o644, Data: []byte("root:x:0:\nuser:x:1000:\nnogroup:x:65534:\n")},
		{Path: "tmp", Mode: os.ModeDir | os.ModeSticky | 0o777},
		{Path: "root", Mode: os.ModeDir | 0o700},
		{Path: "home", Mode: os.ModeDir | 0o755},
		{Path: "home/user", Mode: os.ModeDir | 0o755, UID: 1000, GID: 1000},
		{Path: "usr", Mode: os.ModeDir | 0o755},
		{Path: "usr/bin", Mode: os.ModeDir | 0o755},
	}
	for _, a := range strings.Fields(string(out)) {
		if a == "busybox" || strings.Contains(a, "/") {
			continue
		}
		files = append(files, image.File{Path: "bin/" + a, Mode: os.ModeSymlink | 0o777, Link: "busybox"})
	}
	return image.Build(files, v1.Config{Env: []string{"PATH=/usr/bin:/bin"}, Cmd: []string{"/bin/sh"}})
}

// GoBuild builds package pkg (of this module) into out, statically.
func GoBuild(ctx context.Context, out, pkg string) error {
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = "/usr/local/go/bin/go"
	}
	cmd := exec.CommandContext(ctx, goBin, "build", "-trimpath", "-ldflags=-s -w", "-o", out, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %v: %s", pkg, err, strings.TrimSpace(string(b)))
	}
	return nil
}
