//go:build linux

package cgroup

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/paddockhq/paddock/internal/errs"
)

// freezeWait bounds how long Freeze and Thaw wait for the kernel to settle
// the state (a task in uninterruptible sleep holds v1 in FREEZING).
const freezeWait = 5 * time.Second

// Freeze stops every task of the group and its sub-groups (pause): v1
// writes FROZEN to freezer.state and waits until it reads FROZEN (not
// FREEZING); v2 writes 1 to cgroup.freeze and waits for "frozen 1" in
// cgroup.events. Memory stays where it is; sockets stay open. Freezing a
// frozen group is a no-op. Without a freezer it fails wrapping
// errs.ErrUnsupported.
func (g *Group) Freeze(ctx context.Context) error {
	return g.setFrozen(ctx, true)
}

// Thaw lets a frozen group run again (resume); thawing a thawed group is
// a no-op.
func (g *Group) Thaw(ctx context.Context) error {
	return g.setFrozen(ctx, false)
}

// Frozen reports whether the group is frozen (v1: FROZEN or FREEZING —
// either way it is not running freely).
func (g *Group) Frozen() (bool, error) {
	if g.unified != "" {
		v, err := readValue(filepath.Join(g.unified, "cgroup.freeze"))
		if err != nil {
			return false, fmt.Errorf("cgroup: %s: read cgroup.freeze: %w", g.id, err)
		}
		return v == 1, nil
	}
	if g.freezer == "" {
		return false, nil
	}
	b, err := readFile(filepath.Join(g.freezer, "freezer.state"))
	if err != nil {
		return false, fmt.Errorf("cgroup: %s: read freezer.state: %w", g.id, err)
	}
	s := strings.TrimSpace(string(b))
	return s == "FROZEN" || s == "FREEZING", nil
}

func (g *Group) setFrozen(ctx context.Context, frozen bool) error {
	var file, value string
	var settled func() (bool, error)
	switch {
	case g.unified != "":
		file = filepath.Join(g.unified, "cgroup.freeze")
		value = map[bool]string{true: "1", false: "0"}[frozen]
		events := filepath.Join(g.unified, "cgroup.events")
		want := map[bool]int64{true: 1, false: 0}[frozen]
		settled = func() (bool, error) {
			v, err := readKey(events, "frozen")
			return v == want, err
		}
	case g.freezer != "":
		file = filepath.Join(g.freezer, "freezer.state")
		value = map[bool]string{true: "FROZEN", false: "THAWED"}[frozen]
		settled = func() (bool, error) {
			b, err := readFile(file)
			return strings.TrimSpace(string(b)) == value, err
		}
	default:
		return fmt.Errorf("cgroup: %s: no freezer on this host: %w", g.id, errs.ErrUnsupported)
	}
	if err := writeFile(file, value); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("cgroup: %s: %s: %w", g.id, filepath.Base(file), errs.ErrUnsupported)
		}
		return fmt.Errorf("cgroup: %s: write %s: %w", g.id, filepath.Base(file), err)
	}
	ctx, cancel := context.WithTimeout(ctx, freezeWait)
	defer cancel()
	for i := 0; ; i++ {
		ok, err := settled()
		if err != nil {
			return fmt.Errorf("cgroup: %s: read freezer state: %w", g.id, err)
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			if frozen {
				// Never leave a half-frozen group behind a failed pause.
				_ = writeFile(file, map[bool]string{true: "0", false: "THAWED"}[g.unified != ""])
			}
			return fmt.Errorf("cgroup: %s: freezer did not settle to %s: %w", g.id, value, errs.ErrTimeout)
		case <-time.After(freezePoll(i)):
		}
		if frozen && g.unified == "" {
			if err := refreezeV1(file, i); err != nil {
				return fmt.Errorf("cgroup: %s: write %s: %w", g.id, filepath.Base(file), err)
			}
		}
	}
}

// refreezeV1 pushes a v1 freezer that is stuck in FREEZING. The v1
// freezer marks the tasks it finds when FROZEN is written; a task forked
// while the walk runs (a workload that keeps spawning, e.g. a shell loop
// of short commands) can escape it, and the state then stays FREEZING
// until FROZEN is written again. So the write is repeated while polling,
// and every 25th poll the group is thawed for a moment and frozen anew,
// which lets a task caught half-way finish its fork (the remedy runc's
// v1 freezer uses too).
func refreezeV1(file string, i int) error {
	if i%25 == 24 {
		if err := writeFile(file, "THAWED"); err != nil {
			return err
		}
		time.Sleep(time.Millisecond)
	}
	return writeFile(file, "FROZEN")
}

// freezePoll is short first (the freezer usually settles in a few ms).
func freezePoll(i int) time.Duration {
	if i < 10 {
		return 500 * time.Microsecond
	}
	return 5 * time.Millisecond
}
