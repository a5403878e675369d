package main

import (
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/paddockhq/paddock/internal/dockerfile/sandboxrunner"
)

// serve's --builder-* flags set the RUN steps' limits, defaulting to
// sandboxrunner.Defaults; bad values are refused.
func TestBuilderFlags(t *testing.T) {
	parse := func(args ...string) (sandboxrunner.Limits, error) {
		var f templateFlags
		fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
		f.register(fs)
		if err := fs.Parse(args); err != nil {
			return sandboxrunner.Limits{}, err
		}
		c, err := f.config()
		return c.Builder, err
	}
	if l, err := parse(); err != nil || l != sandboxrunner.Defaults {
		t.Fatalf("defaults: %+v %v, want %+v", l, err, sandboxrunner.Defaults)
	}
	l, err := parse("--builder-cpu", "2", "--builder-memory", "2G", "--builder-disk", "8G", "--builder-pids", "99", "--builder-timeout", "5m")
	want := sandboxrunner.Limits{CPU: 2, MemoryMB: 2048, DiskMB: 8192, Pids: 99, Timeout: 5 * time.Minute}
	if err != nil || l != want {
		t.Fatalf("set: %+v %v, want %+v", l, err, want)
	}
	for _, bad := range [][]string{{"--builder-memory", "lots"}, {"--builder-disk", "0"}, {"--builder-pids", "-1"}, {"--builder-timeout", "-1s"}} {
		if _, err := parse(bad...); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}
