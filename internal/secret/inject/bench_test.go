package inject

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/store"
)

// BenchmarkHookSetup is what a create with inject rules pays for its CA:
// a new CA (two P-256 keys, a signature), sealed and recorded, and the
// template's bundle (cached) with the CA appended.
func BenchmarkHookSetup(b *testing.B) {
	dir := b.TempDir()
	db, err := store.Open(dir, Migrations...)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	u := &unit{dir: dir, db: db}
	if u.key, err = loadKeyForBench(dir); err != nil {
		b.Fatal(err)
	}
	u.cas = NewCAStore(db.SQL(), u.key)
	root := b.TempDir()
	os.MkdirAll(filepath.Join(root, "etc/ssl/certs"), 0o755)
	bundle, _ := os.ReadFile("/etc/ssl/certs/ca-certificates.crt")
	os.WriteFile(filepath.Join(root, "etc/ssl/certs/ca-certificates.crt"), bundle, 0o644)
	h := NewHook(u.cas, db, fakeTemplates{root}, nil)
	ctx := context.Background()
	ids := make([]string, b.N)
	for i := range ids {
		ids[i] = fmt.Sprintf("sb-%026d", i)
		db.PutSandbox(ctx, store.Sandbox{ID: ids[i], Tenant: "t", State: "running", Template: "host", Spec: []byte("{}"),
			CreatedAt: time.Now(), ExpiresAt: time.Now()})
	}
	b.ResetTimer()
	for i := range b.N {
		var st runtime.NetSetup
		if err := h.Setup(ctx, ids[i], runtime.NetPolicy{Mode: "open", Intercept: []string{"api.example.com"}}, &st); err != nil {
			b.Fatal(err)
		}
	}
}
