package main

import (
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/spf13/pflag"

	"github.com/paddockhq/paddock/internal/dockerfile/sandboxrunner"
	"github.com/paddockhq/paddock/internal/server"
)

// templateFlags are serve's image-template flags.
type templateFlags struct {
	storeMax string
	insecure []string
	authFile string

	builderCPU     float64
	builderMemory  string
	builderDisk    string
	builderPids    int64
	builderTimeout time.Duration
}

func (f *templateFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.storeMax, "template-store-max", "", "most disk the template layer store may take, e.g. 50G (default: unlimited)")
	fs.StringArrayVar(&f.insecure, "insecure-registry", nil, "a registry HOST:PORT reached over plain HTTP (repeatable)")
	fs.StringVar(&f.authFile, "registry-auth", "", "registry credentials in Docker's config.json format")
	d := sandboxrunner.Defaults
	fs.Float64Var(&f.builderCPU, "builder-cpu", d.CPU, "CPU cores of each Dockerfile RUN step's sandbox")
	fs.StringVar(&f.builderMemory, "builder-memory", strconv.FormatInt(d.MemoryMB, 10)+"M", "memory of each RUN step's sandbox")
	fs.StringVar(&f.builderDisk, "builder-disk", strconv.FormatInt(d.DiskMB, 10)+"M", "writable layer of each RUN step's sandbox (what one step may add)")
	fs.Int64Var(&f.builderPids, "builder-pids", d.Pids, "processes of each RUN step's sandbox")
	fs.DurationVar(&f.builderTimeout, "builder-timeout", d.Timeout, "longest one RUN step may take")
}

func (f *templateFlags) config() (server.TemplatesConfig, error) {
	c := server.TemplatesConfig{AuthFile: f.authFile}
	if f.storeMax != "" {
		mb, err := parseSizeMB(f.storeMax)
		if err != nil || mb < 1 {
			return c, fmt.Errorf("--template-store-max: invalid size %q", f.storeMax)
		}
		c.StoreMax = mb << 20
	}
	c.Builder = sandboxrunner.Limits{CPU: f.builderCPU, Pids: f.builderPids, Timeout: f.builderTimeout}
	for _, sz := range []struct {
		flag, v string
		mb      *int64
	}{{"--builder-memory", f.builderMemory, &c.Builder.MemoryMB}, {"--builder-disk", f.builderDisk, &c.Builder.DiskMB}} {
		if sz.v == "" {
			continue
		}
		mb, err := parseSizeMB(sz.v)
		if err != nil || mb < 1 {
			return c, fmt.Errorf("%s: invalid size %q", sz.flag, sz.v)
		}
		*sz.mb = mb
	}
	if f.builderCPU < 0 || f.builderPids < 0 || f.builderTimeout < 0 {
		return c, fmt.Errorf("--builder-cpu, --builder-pids and --builder-timeout must not be negative")
	}
	for _, h := range f.insecure {
		host, port, err := net.SplitHostPort(h)
		if n, perr := strconv.Atoi(port); err != nil || host == "" || perr != nil || n < 1 || n > 65535 {
			return c, fmt.Errorf("--insecure-registry %q: want HOST:PORT", h)
		}
		c.Insecure = append(c.Insecure, h)
	}
	return c, nil
}
