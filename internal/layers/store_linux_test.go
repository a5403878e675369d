package layers

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/paddockhq/paddock/internal/errs"
)

func diffID(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

func openStore(t *testing.T, dir string, max int64) *Store {
	t.Helper()
	s, err := Open(Options{Dir: dir, MaxBytes: max})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func dirNames(t *testing.T, p string) []string {
	t.Helper()
	ents, err := os.ReadDir(p)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

func TestStoreSharesAndCollects(t *testing.T) {
	requireRoot(t)
	dir := t.TempDir()
	s := openStore(t, dir, 0)
	base := mkTar(t, ent{name: "etc/os-release", body: "ID=test\n"}, ent{name: "bin/sh", body: "elf", mode: 0o755})
	appA := mkTar(t, ent{name: "app/a", body: "a"})
	appB := mkTar(t, ent{name: "app/b", body: "b"})
	ctx := context.Background()
	put := func(data []byte, owner string, stack ...[]byte) {
		lease := s.NewLease()
		defer lease.Release()
		var ids []string
		for _, d := range append(stack, data) {
			l, err := s.Put(ctx, lease, diffID(d), bytes.NewReader(d), Limits{})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, l.DiffID)
		}
		if err := s.SetRefs(owner, ids); err != nil {
			t.Fatal(err)
		}
	}
	put(appA, "tpl-a", base)
	put(appB, "tpl-b", base)
	if got := len(dirNames(t, filepath.Join(dir, layersDir))); got != 3 {
		t.Fatalf("%d layer directories on disk, want 3 (the base once)", got)
	}
	if n := s.Refs(diffID(base)); n != 2 {
		t.Fatalf("base refs = %d, want 2", n)
	}
	l, _ := s.Get(diffID(base))
	if b, err := os.ReadFile(filepath.Join(l.Dir, "etc/os-release")); err != nil || string(b) != "ID=test\n" {
		t.Fatalf("layer content: %q %v", b, err)
	}

	// Restart: everything survives.
	s = openStore(t, dir, 0)
	if n := s.Refs(diffID(base)); n != 2 {
		t.Fatalf("after reopen base refs = %d", n)
	}
	if err := s.DropRefs("tpl-a"); err != nil {
		t.Fatal(err)
	}
	lease := s.NewLease()
	if err := lease.Hold(diffID(appA)); err != nil {
		t.Fatal(err)
	}
	if n, _, err := s.GC(); err != nil || n != 0 {
		t.Fatalf("GC removed %d (%v) while the layer was leased", n, err)
	}
	lease.Release()
	if n, freed, err := s.GC(); err != nil || n != 1 || freed <= 0 {
		t.Fatalf("GC = %d, %d, %v; want one layer", n, freed, err)
	}
	if _, ok := s.Get(diffID(appA)); ok {
		t.Fatal("collected layer still listed")
	}
	if _, ok := s.Get(diffID(base)); !ok {
		t.Fatal("shared base collected")
	}
	if got := len(dirNames(t, filepath.Join(dir, layersDir))); got != 2 {
		t.Fatalf("%d layer directories after GC, want 2", got)
	}
}

func TestStoreRefusesAndLeavesNothing(t *testing.T) {
	requireRoot(t)
	ctx := context.Background()
	good := mkTar(t, ent{name: "f", body: "content"})
	gzBomb := func() []byte {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		zw.Write(mkTar(t, ent{name: "zeros", size: 64 << 20}))
		zw.Close()
		return buf.Bytes()
	}()
	cases := []struct {
		name   string
		max    int64
		want   string
		r      func() io.Reader
		lim    Limits
		code   errs.Code
		reason error
	}{
		{"tampered", 0, diffID(good), func() io.Reader {
			b := bytes.Clone(good)
			b[600] ^= 1 // inside the file's content
			return bytes.NewReader(b)
		}, Limits{}, errs.CodeInvalid, ErrDigest},
		{"gzip-bomb", 0, "", func() io.Reader {
			zr, err := gzip.NewReader(bytes.NewReader(gzBomb))
			if err != nil {
				t.Fatal(err)
			}
			return zr
		}, Limits{MaxBytes: 8 << 20}, errs.CodeTooLarge, ErrTooLarge},
		{"over-store-limit", 1 << 20, "", func() io.Reader {
			return bytes.NewReader(mkTar(t, ent{name: "big", size: 2 << 20}))
		}, Limits{}, errs.CodeLimit, ErrStoreFull},
		{"trailing-garbage", 0, "", func() io.Reader {
			return io.MultiReader(bytes.NewReader(good), io.LimitReader(zeros{}, 8<<20))
		}, Limits{MaxBytes: 1 << 10, MaxEntries: 4}, errs.CodeTooLarge, ErrTooLarge},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			s := openStore(t, dir, c.max)
			lease := s.NewLease()
			defer lease.Release()
			_, err := s.Put(ctx, lease, c.want, c.r(), c.lim)
			if errs.CodeOf(err) != c.code || !errors.Is(err, c.reason) {
				t.Fatalf("err = %v (%s), want %s / %v", err, errs.CodeOf(err), c.code, c.reason)
			}
			if n := dirNames(t, filepath.Join(dir, layersDir)); len(n) != 0 {
				t.Fatalf("layers left: %v", n)
			}
			if n := dirNames(t, filepath.Join(dir, tmpDir)); len(n) != 0 {
				t.Fatalf("staging left: %v", n)
			}
			if u := s.Usage(); u.Bytes != 0 || u.Layers != 0 {
				t.Fatalf("usage after a refused put: %+v", u)
			}
		})
	}
}

func TestStoreLimitCollectsFirst(t *testing.T) {
	requireRoot(t)
	ctx := context.Background()
	s := openStore(t, t.TempDir(), 3<<20)
	a := mkTar(t, ent{name: "a", size: 2 << 20})
	b := mkTar(t, ent{name: "b", size: 2 << 20})
	lease := s.NewLease()
	if _, err := s.Put(ctx, lease, "", bytes.NewReader(a), Limits{}); err != nil {
		t.Fatal(err)
	}
	lease.Release() // a is now unreferenced: the store may reclaim it
	lease = s.NewLease()
	defer lease.Release()
	if _, err := s.Put(ctx, lease, "", bytes.NewReader(b), Limits{}); err != nil {
		t.Fatalf("put over an unreferenced layer: %v", err)
	}
	if _, ok := s.Get(diffID(a)); ok {
		t.Fatal("unreferenced layer not collected to make room")
	}
	// Now b is leased: a third layer does not fit.
	_, err := s.Put(ctx, lease, "", bytes.NewReader(a), Limits{})
	if !errors.Is(err, ErrStoreFull) {
		t.Fatalf("err = %v, want store full", err)
	}
}

func TestStoreSweepsCrashLeftovers(t *testing.T) {
	requireRoot(t)
	dir := t.TempDir()
	s := openStore(t, dir, 0)
	_ = s
	// A crashed Put: a staging tree nobody holds, and a layer directory
	// without its layer.json (renamed by hand: cannot happen through Put).
	os.MkdirAll(filepath.Join(dir, tmpDir, "put-dead", rootDir, "etc"), 0o755)
	half := filepath.Join(dir, layersDir, "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef")
	os.MkdirAll(filepath.Join(half, rootDir), 0o755)
	// A live staging directory of another process (flocked) stays.
	live := filepath.Join(dir, tmpDir, "put-live")
	os.Mkdir(live, 0o700)
	f, ok, err := tryLock(live)
	if err != nil || !ok {
		t.Fatal(err)
	}
	defer f.Close()
	// flock is per open file description: the second Open's tryLock on
	// the same path from this process conflicts just like another's would.
	openStore(t, dir, 0)
	if got := dirNames(t, filepath.Join(dir, tmpDir)); len(got) != 1 || got[0] != "put-live" {
		t.Fatalf("tmp after open: %v", got)
	}
	if _, err := os.Stat(half); err == nil {
		t.Fatal("half-made layer kept")
	}
}

func TestStoreConcurrentPutOnce(t *testing.T) {
	requireRoot(t)
	s := openStore(t, t.TempDir(), 0)
	data := mkTar(t, ent{name: "x", size: 1 << 20})
	var wg sync.WaitGroup
	errc := make(chan error, 4)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lease := s.NewLease()
			defer lease.Release()
			_, err := s.Put(context.Background(), lease, diffID(data), bytes.NewReader(data), Limits{})
			errc <- err
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		if err != nil {
			t.Fatal(err)
		}
	}
	if u := s.Usage(); u.Layers != 1 {
		t.Fatalf("layers = %d", u.Layers)
	}
}
