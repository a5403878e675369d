package main

import (
	"fmt"
	"net"
	"strconv"

	"github.com/spf13/pflag"

	"github.com/paddockhq/paddock/internal/server"
)

// templateFlags are serve's image-template flags.
type templateFlags struct {
	storeMax string
	insecure []string
	authFile string
}

func (f *templateFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.storeMax, "template-store-max", "", "most disk the template layer store may take, e.g. 50G (default: unlimited)")
	fs.StringArrayVar(&f.insecure, "insecure-registry", nil, "a registry HOST:PORT reached over plain HTTP (repeatable)")
	fs.StringVar(&f.authFile, "registry-auth", "", "registry credentials in Docker's config.json format")
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
	for _, h := range f.insecure {
		host, port, err := net.SplitHostPort(h)
		if n, perr := strconv.Atoi(port); err != nil || host == "" || perr != nil || n < 1 || n > 65535 {
			return c, fmt.Errorf("--insecure-registry %q: want HOST:PORT", h)
		}
		c.Insecure = append(c.Insecure, h)
	}
	return c, nil
}
