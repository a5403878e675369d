package main

import (
	"io"
	"reflect"
	"testing"

	"github.com/spf13/pflag"
)

// TestBenchServeFlags holds the embedded bench to serve's defaults: only
// the fields the bench must change (data, listen, pool, sizes, host
// ranges) may differ from what `paddock serve` runs with.
func TestBenchServeFlags(t *testing.T) {
	var want serveFlags
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	want.register(fs)
	got := benchServeFlags("/tmp/x", 0, 117, 3_600_000_000, "paddock-bench-1-1")
	if got.data != "/tmp/x" || got.listen != "127.0.0.1:0" || got.pool != 0 || got.maxSandboxes != 117 ||
		got.uidBase != 3_600_000_000 || got.cgroupPrefix != "paddock-bench-1-1" {
		t.Errorf("overrides not applied: %+v", got)
	}
	want.data, want.listen, want.pool, want.maxSandboxes, want.uidBase, want.cgroupPrefix =
		got.data, got.listen, got.pool, got.maxSandboxes, got.uidBase, got.cgroupPrefix
	if !reflect.DeepEqual(*got, want) {
		t.Errorf("embedded bench flags differ from serve's defaults:\n got %+v\nwant %+v", *got, want)
	}
}

func TestRandomBenchUIDBase(t *testing.T) {
	for i := 0; i < 1000; i++ {
		b := randomBenchUIDBase()
		if b%65536 != 0 || b < 3_600_000_000-65536 || b > 3_900_000_000 {
			t.Fatalf("uid base %d: want 65536-aligned in [3.6e9, 3.9e9]", b)
		}
		if end := int64(b) + benchSlots*65536; end > runcHostUIDBase {
			t.Fatalf("uid base %d: its ranges end at %d, past the runc bundle's %d", b, end, int64(runcHostUIDBase))
		}
	}
}

// runcHostUIDBase mirrors internal/bench's runc bundle mapping.
const runcHostUIDBase = 4_200_000_000
