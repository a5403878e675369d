package mcp

import (
	"archive/tar"
	"bytes"
	"context"
	"io"
	"path"
	"sort"
	"strings"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/template/tplsvc"
	"github.com/paddockhq/paddock/wire"
)

// Templates is the template service the template tools call, for the
// caller in ctx (tplsvc.Service); nil leaves the tools out.
type Templates interface {
	List(ctx context.Context, sc rights.Scope) ([]wire.Template, error)
	Pull(ctx context.Context, sc rights.Scope, req wire.TemplatePullRequest, progress func(string)) (wire.Template, error)
	Build(ctx context.Context, sc rights.Scope, req tplsvc.BuildRequest, contextTar io.Reader, emit func(wire.TemplateEvent)) (wire.Template, error)
}

const (
	maxBuildFiles     = 256
	maxBuildFileBytes = 4 << 20 // all inline files together
	maxBuildLog       = 8 << 10 // the build log's tail in the result
)

type templateListOut struct {
	Templates []wire.Template `json:"templates"`
}

type templatePullIn struct {
	Ref      string `json:"ref" jsonschema:"Image reference: [REGISTRY/]REPO[:TAG|@DIGEST], e.g. python:3.12-slim."`
	Name     string `json:"name,omitempty" jsonschema:"Template name (default: the repository's last path element)."`
	Replace  bool   `json:"replace,omitempty" jsonschema:"Replace an existing template of that name."`
	StartCmd string `json:"start_cmd,omitempty" jsonschema:"Shell command its sandboxes start at create."`
	ReadyCmd string `json:"ready_cmd,omitempty" jsonschema:"Shell command that exits 0 once the start command is ready."`
}

type templateBuildIn struct {
	Name       string            `json:"name" jsonschema:"Template to make."`
	Dockerfile string            `json:"dockerfile" jsonschema:"The Dockerfile's text."`
	Files      map[string]string `json:"files,omitempty" jsonschema:"Build context files COPY can use: relative path to text content (at most 256 files, 4 MiB)."`
	BuildArgs  map[string]string `json:"build_args,omitempty" jsonschema:"Build arguments (ARG)."`
	Network    string            `json:"network,omitempty" jsonschema:"RUN steps' network: none (default) or allowlist."`
	Allow      []string          `json:"allow,omitempty" jsonschema:"Hosts RUN steps may reach with network allowlist."`
	Replace    bool              `json:"replace,omitempty" jsonschema:"Replace an existing template of that name."`
}

type templateBuildOut struct {
	Template wire.Template `json:"template"`
	Log      string        `json:"log" jsonschema:"The build log's last 8 KiB."`
}

// templateTools are template_list, template_pull and template_build
// (docs/templates.md).
func templateTools(tb *Toolbox, t Templates) {
	Add(tb, Tool{Name: "template_list", Need: rights.Of(rights.Read), Title: "List templates", ReadOnly: true,
		Description: "List the templates sandboxes can start from (sandbox_create's `template`): yours and the shared ones, " +
			"with kind, layers and sizes."},
		func(c *Call, _ listIn) (templateListOut, error) {
			list, err := t.List(c.Context(), rights.FromContext(c.Context()))
			if list == nil {
				list = []wire.Template{}
			}
			return templateListOut{Templates: list}, err
		})
	Add(tb, Tool{Name: "template_pull", Need: rights.Of(rights.Templates), Title: "Pull an image as a template", Additive: true,
		Description: "Pull a container image from a registry and make it a template; sandboxes created from it see its files, " +
			"environment, working directory and user."},
		func(c *Call, in templatePullIn) (wire.Template, error) {
			if in.Ref == "" {
				return wire.Template{}, newToolError(errs.CodeInvalid, "Give `ref`: the image to pull, e.g. python:3.12-slim.")
			}
			return t.Pull(c.Context(), rights.FromContext(c.Context()), wire.TemplatePullRequest{Ref: in.Ref, Name: in.Name,
				Replace: in.Replace, StartCmd: shellLine(in.StartCmd), ReadyCmd: shellLine(in.ReadyCmd)}, nil)
		})
	Add(tb, Tool{Name: "template_build", Need: rights.Of(rights.Templates), Title: "Build a Dockerfile into a template", Additive: true,
		Description: "Build a Dockerfile (FROM a template or a registry image, RUN, COPY from `files`, ENV, WORKDIR, USER...) into " +
			"a template. RUN steps run in sandboxes with no network unless `network` is allowlist. A failed RUN answers its " +
			"exit code and output."},
		func(c *Call, in templateBuildIn) (templateBuildOut, error) {
			if in.Name == "" || in.Dockerfile == "" {
				return templateBuildOut{}, newToolError(errs.CodeInvalid, "Give `name` and `dockerfile` (the Dockerfile's text).")
			}
			ctxTar, err := contextTar(in.Dockerfile, in.Files)
			if err != nil {
				return templateBuildOut{}, err
			}
			var log []byte
			tpl, err := t.Build(c.Context(), rights.FromContext(c.Context()), tplsvc.BuildRequest{Name: in.Name, BuildArgs: in.BuildArgs,
				Network: in.Network, Allow: in.Allow, Replace: in.Replace}, bytes.NewReader(ctxTar), func(e wire.TemplateEvent) {
				line := e.Output
				if line == "" && e.Instruction != "" {
					line = e.Instruction + "\n"
				} else if line == "" && e.Message != "" {
					line = e.Message + "\n"
				}
				if log = append(log, line...); len(log) > 2*maxBuildLog {
					log = append([]byte(nil), log[len(log)-maxBuildLog:]...)
				}
			})
			if len(log) > maxBuildLog {
				log = log[len(log)-maxBuildLog:]
			}
			return templateBuildOut{Template: tpl, Log: strings.ToValidUTF8(string(log), "?")}, err
		})
}

func shellLine(s string) []string {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	return []string{"/bin/sh", "-c", s}
}

// contextTar makes a build context of the Dockerfile and the inline files.
func contextTar(dockerfile string, files map[string]string) ([]byte, error) {
	if len(files) > maxBuildFiles {
		return nil, newToolError(errs.CodeInvalid, "At most %d files in `files`.", maxBuildFiles)
	}
	total := len(dockerfile)
	names := make([]string, 0, len(files))
	for n, body := range files {
		clean := path.Clean("/" + n)[1:]
		if clean == "" || clean != n || clean == "Dockerfile" {
			return nil, newToolError(errs.CodeInvalid, "File %q: give a clean relative path (not Dockerfile).", n)
		}
		total += len(body)
		names = append(names, n)
	}
	if total > maxBuildFileBytes {
		return nil, newToolError(errs.CodeTooLarge, "The Dockerfile and files are over %d bytes together.", maxBuildFileBytes)
	}
	sort.Strings(names)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	add := func(name, body string) error {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		_, err := io.WriteString(tw, body)
		return err
	}
	if err := add("Dockerfile", dockerfile); err != nil {
		return nil, err
	}
	for _, n := range names {
		if err := add(n, files[n]); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
