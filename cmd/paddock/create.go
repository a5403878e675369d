package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/paddockhq/paddock/client"
)

// specFlags are the flags shared by create and run.
type specFlags struct {
	template, memory, disk, timeout, net string
	runtime                              string
	cpu                                  float64
	pids                                 int64
	browser                              bool
	allow, labels, env                   []string
	life                                 lifeFlags // pause.go
}

func (f *specFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.template, "template", "", "template to start from (default: the server's, usually \"host\")")
	fs.Float64Var(&f.cpu, "cpu", 0, "CPU cores (e.g. 0.5, 2)")
	fs.StringVar(&f.memory, "memory", "", "memory ceiling, e.g. 512M, 2G")
	fs.StringVar(&f.disk, "disk", "", "writable disk quota, e.g. 1G")
	fs.Int64Var(&f.pids, "pids", 0, "maximum number of processes")
	fs.StringVar(&f.timeout, "timeout", "", "life of the sandbox, e.g. 30m (then it is destroyed)")
	fs.StringVar(&f.net, "net", "", "network mode: none (default), allowlist or open")
	fs.StringArrayVar(&f.allow, "allow", nil, "domain the sandbox may reach (allowlist mode; repeatable)")
	fs.StringArrayVar(&f.labels, "label", nil, "label KEY=VALUE (repeatable)")
	fs.StringArrayVar(&f.env, "env", nil, "environment variable KEY=VALUE for every command (repeatable)")
	fs.StringVar(&f.runtime, "runtime", "", "isolation: native (default) or gvisor (gVisor's kernel; see docs/gvisor.md)")
	f.life.register(fs)
	fs.BoolVar(&f.browser, "browser", false, "start a headless browser in the sandbox (larger default limits; see paddock browser)")
}

func (f *specFlags) spec() (client.Spec, error) {
	s := client.Spec{Template: f.template, CPU: f.cpu, Pids: f.pids, Browser: f.browser, Runtime: f.runtime}
	var err error
	if f.memory != "" {
		if s.MemoryMB, err = parseSizeMB(f.memory); err != nil {
			return s, fmt.Errorf("--memory: %w", err)
		}
	}
	if f.disk != "" {
		if s.DiskMB, err = parseSizeMB(f.disk); err != nil {
			return s, fmt.Errorf("--disk: %w", err)
		}
	}
	if f.timeout != "" {
		d, err := parseDuration(f.timeout)
		if err != nil {
			return s, fmt.Errorf("--timeout: %w", err)
		}
		s.TimeoutS = int64(d.Seconds())
		if s.TimeoutS == 0 {
			return s, fmt.Errorf("--timeout: at least 1s")
		}
	}
	if err := f.life.apply(&s); err != nil {
		return s, err
	}
	if s.Labels, err = parseKV("--label", f.labels); err != nil {
		return s, err
	}
	if s.Env, err = parseKV("--env", f.env); err != nil {
		return s, err
	}
	if f.net != "" || len(f.allow) > 0 {
		mode := f.net
		if mode == "" {
			mode = "allowlist"
		}
		s.Network = &client.Network{Mode: mode, Allow: f.allow}
	}
	return s, nil
}

func newCreateCmd(e *env) *cobra.Command {
	var f specFlags
	cmd := resultVerb(e, &cobra.Command{Use: "create [flags]", Short: "Create a sandbox and print its id", Args: cobra.NoArgs},
		"print the whole sandbox as JSON", func(ctx context.Context, _ []string) (client.Sandbox, error) {
			spec, err := f.spec()
			if err != nil {
				return client.Sandbox{}, err
			}
			return e.client().Create(ctx, spec)
		}, func(sb client.Sandbox) error { return e.println(sb.ID) })
	f.register(cmd.Flags())
	return cmd
}
