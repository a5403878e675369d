package main

import (
	"archive/tar"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/localtar"
	"github.com/paddockhq/paddock/internal/template"
)

// dockerfileInContext is where an -f file from outside CONTEXT goes in
// the uploaded context.
const dockerfileInContext = ".paddock.Dockerfile"

func newTemplateBuildCmd(e *env) *cobra.Command {
	var b client.TemplateBuild
	var file string
	var args []string
	var deb template.DebianOptions
	var data string
	cmd := &cobra.Command{
		Use:   "build [-f Dockerfile] --name NAME CONTEXT | build debian",
		Short: "Build a template from a Dockerfile, in Paddock sandboxes on the server (or a Debian template here)",
		Long: `Build a template from a Dockerfile: CONTEXT (a directory) is uploaded, RUN steps
run in sandboxes on the server over the layers so far, with no network unless
--net allowlist --allow HOST. "paddock template build debian" still builds a
Debian template with mmdebstrap on this host, into --data.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, pos []string) error {
			if pos[0] == "debian" && file == "" && b.Name == "" {
				if _, err := os.Stat("debian"); err != nil {
					return debianBuild(e, cmd, deb, data)
				}
			}
			if b.Name == "" {
				return fmt.Errorf("--name is required")
			}
			dir := pos[0]
			if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
				return fmt.Errorf("build context %s is not a directory", dir)
			}
			for _, kv := range args {
				k, v, ok := strings.Cut(kv, "=")
				if !ok {
					v, ok = os.LookupEnv(k) // Docker's --build-arg K: from the environment
				}
				if k == "" || !ok {
					return fmt.Errorf("--build-arg %q: want KEY=VALUE", kv)
				}
				if b.BuildArgs == nil {
					b.BuildArgs = map[string]string{}
				}
				b.BuildArgs[k] = v
			}
			extra, err := dockerfileOutside(dir, file, &b)
			if err != nil {
				return err
			}
			pr, pw := io.Pipe()
			go func() { pw.CloseWithError(writeContext(pw, dir, extra, e.stderr)) }()
			t, err := e.client().BuildTemplate(cmd.Context(), b, pr, -1, progressTo(e))
			pr.Close()
			if err != nil {
				return err
			}
			printTemplate(e, t)
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVarP(&file, "file", "f", "", "the Dockerfile (default CONTEXT/Dockerfile)")
	fs.StringVar(&b.Name, "name", "", "the template to make")
	fs.StringArrayVar(&args, "build-arg", nil, "a build argument KEY=VALUE (repeatable)")
	fs.StringVar(&b.Target, "target", "", "the stage to build (default the last)")
	fs.StringVar(&b.Network, "net", "none", "RUN steps' and ADD URLs' network: none or allowlist")
	fs.StringArrayVar(&b.Allow, "allow", nil, "a host RUN steps and ADD URLs may reach with --net allowlist (repeatable)")
	fs.BoolVar(&b.NoCache, "no-cache", false, "run every step again")
	fs.BoolVar(&b.Replace, "replace", false, "replace an existing template of that name")
	fs.BoolVar(&b.Shared, "shared", false, "publish it for every tenant (admin key)")
	fs.StringVar(&data, "data", defaultDataDir, "build debian: the server's data directory")
	fs.StringVar(&deb.Suite, "suite", "", "build debian: Debian suite (default bookworm)")
	fs.StringVar(&deb.Mirror, "mirror", "", "build debian: Debian mirror URL (default: the host's)")
	fs.StringSliceVar(&deb.Include, "include", nil, "build debian: extra packages (comma-separated)")
	return cmd
}

// dockerfileOutside sets b.Dockerfile: file's path inside dir, or, for a
// file elsewhere, the name it is uploaded under (returned as extra).
func dockerfileOutside(dir, file string, b *client.TemplateBuild) (extra string, err error) {
	if file == "" {
		return "", nil
	}
	absDir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	absFile, err := filepath.Abs(file)
	if err != nil {
		return "", err
	}
	if rel, err := filepath.Rel(absDir, absFile); err == nil && !strings.HasPrefix(rel, "..") {
		b.Dockerfile = filepath.ToSlash(rel)
		return "", nil
	}
	b.Dockerfile = dockerfileInContext
	return absFile, nil
}

// writeContext writes dir as a tar, with the Dockerfile extra (if any)
// added under dockerfileInContext.
func writeContext(w io.Writer, dir, extra string, warn io.Writer) error {
	if extra == "" {
		return localtar.Write(w, dir, warn)
	}
	body, err := os.ReadFile(extra)
	if err != nil {
		return err
	}
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(localtar.Write(pw, dir, warn)) }()
	defer pr.Close()
	tr, tw := tar.NewReader(pr), tar.NewWriter(w)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if h.Name == dockerfileInContext {
			continue
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if _, err := io.Copy(tw, tr); err != nil {
			return err
		}
	}
	if err := tw.WriteHeader(&tar.Header{Name: dockerfileInContext, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
		return err
	}
	if _, err := tw.Write(body); err != nil {
		return err
	}
	return tw.Close()
}
