//go:build linux

package native_test

import (
	"context"
	"log/slog"
	"os"
	"sort"
	"testing"
	"time"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/testenv"
)

func TestProbeTimings(t *testing.T) {
	if os.Getenv("PROBE") == "" {
		t.Skip("probe")
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	e := testenv.New(t, testenv.Options{Log: log})
	ctx := context.Background()
	var cr, ex, rm []time.Duration
	for i := 0; i < 30; i++ {
		t0 := time.Now()
		sb, err := e.Client.Create(ctx, client.Spec{})
		if err != nil {
			t.Fatal(err)
		}
		t1 := time.Now()
		e.Client.Exec(ctx, sb.ID, client.ExecRequest{Cmd: []string{"/bin/true"}})
		t2 := time.Now()
		e.Client.Delete(ctx, sb.ID)
		t3 := time.Now()
		cr, ex, rm = append(cr, t1.Sub(t0)), append(ex, t2.Sub(t1)), append(rm, t3.Sub(t2))
	}
	med := func(d []time.Duration) time.Duration {
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		return d[len(d)/2]
	}
	t.Logf("create %v first-exec %v delete %v", med(cr), med(ex), med(rm))
}
