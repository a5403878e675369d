package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/paddockhq/paddock/client"
)

// lifeFlags are create's lifecycle flags (docs/state.md).
type lifeFlags struct {
	autoResume                bool
	onTimeout, idle, pausedTO string
	snapshot                  string   // snapshot.go
	volumes                   []string // volume.go
}

func (f *lifeFlags) register(fs *pflag.FlagSet) {
	fs.BoolVar(&f.autoResume, "auto-resume", false, "calls on the sandbox while it is paused resume it first (instead of failing with sandbox_paused)")
	fs.StringVar(&f.onTimeout, "on-timeout", "", "what the timeout does: kill (default), pause or (gVisor) hibernate")
	fs.StringVar(&f.idle, "idle-pause-after", "", "pause after this long without exec, file, process or port traffic, e.g. 10m")
	fs.StringVar(&f.pausedTO, "paused-timeout", "", "how long it may stay paused before it is destroyed (default 7d), e.g. 48h")
	fs.StringVar(&f.snapshot, "snapshot", "", "start with the files of this snapshot (paddock snapshot ls); its template is the snapshot's")
	fs.StringArrayVar(&f.volumes, "volume", nil, "mount volume NAME at PATH, read-only with :ro (paddock volume ls): NAME:PATH[:ro] (repeatable)")
}

func (f *lifeFlags) apply(s *client.Spec) error {
	s.AutoResume, s.OnTimeout, s.Snapshot = f.autoResume, f.onTimeout, f.snapshot
	var err error
	if s.Volumes, err = parseVolumeFlags(f.volumes); err != nil {
		return err
	}
	for _, x := range []struct {
		flag, v string
		dst     *int64
	}{{"--idle-pause-after", f.idle, &s.IdlePauseAfterS}, {"--paused-timeout", f.pausedTO, &s.PausedTimeoutS}} {
		if x.v == "" {
			continue
		}
		d, err := parseDuration(x.v)
		if err != nil {
			return fmt.Errorf("%s: %w", x.flag, err)
		}
		if *x.dst = int64(d.Seconds()); *x.dst == 0 {
			return fmt.Errorf("%s: at least 1s", x.flag)
		}
	}
	return nil
}

func newPauseCmd(e *env) *cobra.Command {
	return lifecycleCmd(e, "pause ID...", "Pause sandboxes: freeze every process; the timeout clock stops",
		func(c *client.Client) func(context.Context, string) (client.Sandbox, error) { return c.Pause })
}

func newResumeCmd(e *env) *cobra.Command {
	return lifecycleCmd(e, "resume ID...", "Resume paused sandboxes",
		func(c *client.Client) func(context.Context, string) (client.Sandbox, error) { return c.Resume })
}

// lifecycleCmd runs act on each id, printing "ID STATE" per sandbox.
func lifecycleCmd(e *env, use, short string, act func(*client.Client) func(context.Context, string) (client.Sandbox, error)) *cobra.Command {
	return &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			do := act(e.client())
			return e.eachArgSays(args, func(id string) (string, error) {
				sb, err := do(cmd.Context(), id)
				return fmt.Sprint(sb.ID, " ", sb.State), err
			})
		},
	}
}
