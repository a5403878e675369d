//go:build linux

package tplsvc_test

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/oci/ocitest"
	"github.com/paddockhq/paddock/wire"
)

// The Python packages of the code-interpreter template. Node (the
// Dockerfile's last package) is left out of the test's base: the cells
// below are Python's, and Debian's nodejs alone is ~190 MB.
var codePackages = []string{"python3-ipykernel", "python3-numpy", "python3-pandas", "python3-matplotlib"}

// TestCodeInterpreterTemplate builds the repository's code-interpreter
// Dockerfile with Paddock's own builder (REST, a RUN step in a sandbox,
// --net none) and runs code cells in a sandbox of the result: 1+1, a
// matplotlib PNG that decodes, a pandas DataFrame with html and data.
// CI reaches no Debian archive, so BASE is an image the test makes from
// the host's own installed Debian packages (their dpkg file lists, with
// the dependency closure and dpkg's status for them) and pushes to the
// local registry; the Dockerfile's RUN then finds every package present
// and installs nothing. The same cells run in the host template
// (positive control for the cells themselves).
func TestCodeInterpreterTemplate(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the base layer is the host's packages and their closure, about 1 GB")
	}
	for _, p := range codePackages {
		if out, err := exec.Command("dpkg-query", "-W", "-f=${Status}", p).Output(); err != nil || !strings.HasSuffix(string(out), " installed") {
			t.Skipf("the host lacks the Debian package %s (CI installs it: scripts/deps.sh): %v", p, err)
		}
	}
	if err := exec.Command("/usr/bin/python3", "-c", "import ipykernel, numpy, pandas, matplotlib").Run(); err != nil {
		t.Skipf("/usr/bin/python3 cannot import the data stack: %v", err)
	}
	s := newStack(t)
	ctx := context.Background()
	a := s.e.Client

	// The host template runs the cells.
	hostSb, err := a.Create(ctx, client.Spec{Template: "host"})
	if err != nil {
		t.Fatal(err)
	}
	runCells(t, a, hostSb.ID)

	base := s.reg.Ref("paddock/debian-python:1")
	s.reg.Push(t, base, ocitest.Image(t, v1.Config{Env: []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}}, types.OCILayer,
		debianTar(t, append([]string{"dash", "coreutils", "dpkg", "grep"}, codePackages...))))

	df, err := os.ReadFile(filepath.Join("..", "..", "..", "templates", "code-interpreter", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	dir := writeCtx(t, map[string]string{"Dockerfile": string(df)})
	tpl, evs, err := buildTpl(t, a, client.TemplateBuild{Name: "code-interpreter", Shared: true, BuildArgs: map[string]string{
		"BASE": base, "PACKAGES": strings.Join(codePackages, " "),
	}}, dir)
	var out strings.Builder
	for _, e := range evs {
		out.WriteString(e.Output)
	}
	if err != nil {
		t.Fatalf("build: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "present in the base") || !strings.Contains(out.String(), "python kernel stack ok") {
		t.Fatalf("the RUN step's output: %q", out.String())
	}
	sb, err := a.Create(ctx, client.Spec{Template: tpl.Name})
	if err != nil {
		t.Fatal(err)
	}
	// Not the host's /usr: the template's own files.
	if r, err := a.Exec(ctx, sb.ID, client.ExecRequest{Cmd: []string{"sh", "-c", "test -e /usr/bin/go || test -e /usr/bin/apt-get || echo own-root"}}); err != nil || r.Stdout != "own-root\n" {
		t.Fatalf("the built template's root: %v %+v", err, r)
	}
	runCells(t, a, sb.ID)
}

// runCells runs 1+1, a matplotlib figure and a pandas DataFrame in
// sandbox id through the code interpreter.
func runCells(t *testing.T, c *client.Client, id string) {
	t.Helper()
	ctx := context.Background()
	req := func(code string) wire.CodeExecuteRequest {
		var r wire.CodeExecuteRequest
		r.Code = code
		r.TimeoutMS = 60000
		return r
	}
	if ex, err := c.RunCode(ctx, id, req("1+1")); err != nil || ex.Text() != "2" {
		t.Fatalf("1+1: %v %+v", err, ex)
	}
	ex, err := c.RunCode(ctx, id, req("import matplotlib.pyplot as plt\nplt.plot([1,2],[3,4])\nplt.title('t')\nplt.show()"))
	if err != nil || ex.Error != nil || len(ex.Results) != 1 {
		t.Fatalf("matplotlib: %v %+v %+v", err, ex, ex.Error)
	}
	var b64 string
	_ = json.Unmarshal(ex.Results[0].Bundle["image/png"], &b64)
	png, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || len(png) < 8 || string(png[1:4]) != "PNG" {
		t.Fatalf("png: %v %d bytes", err, len(png))
	}
	ex, err = c.RunCode(ctx, id, req("import pandas as pd\npd.DataFrame({'a': [1, 2], 'b': ['x', 'y']})"))
	if err != nil || ex.Error != nil || len(ex.Results) != 1 {
		t.Fatalf("pandas: %v %+v", err, ex)
	}
	var html string
	_ = json.Unmarshal(ex.Results[0].Bundle["text/html"], &html)
	if !strings.Contains(html, "<table") || !strings.Contains(string(ex.Results[0].Data), `"b"`) {
		t.Fatalf("DataFrame: html %q, data %s", html, ex.Results[0].Data)
	}
}

// debianTar is a layer holding the host's installed packages pkgs and
// their dependency closure (the first installed alternative of each),
// from dpkg's file lists, with a dpkg status file naming them. Paths are
// written through the host's merged-/usr symlinks (bin -> usr/bin...),
// which the layer carries too.
func debianTar(t *testing.T, pkgs []string) []byte {
	t.Helper()
	status := readDpkgStatus(t)
	seen := map[string]bool{}
	var order []string
	var visit func(string)
	visit = func(p string) {
		st, ok := status[p]
		if !ok || seen[p] {
			return
		}
		seen[p] = true
		order = append(order, p)
		for _, field := range []string{"Pre-Depends", "Depends"} {
			for _, group := range strings.Split(st.fields[field], ",") {
				for _, alt := range strings.Split(group, "|") {
					name := strings.TrimSpace(alt)
					if i := strings.IndexAny(name, " (:"); i >= 0 {
						name = name[:i]
					}
					if name == "" {
						continue
					}
					if _, ok := status[name]; ok {
						visit(name)
						break
					}
					if prov := providers(status, name); prov != "" {
						visit(prov)
						break
					}
				}
			}
		}
	}
	for _, p := range pkgs {
		if _, ok := status[p]; !ok {
			t.Skipf("package %s is not installed on the host", p)
		}
		visit(p)
	}

	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	done := map[string]bool{}
	var add func(p string) error
	add = func(p string) error {
		p = filepath.Clean(p)
		if p == "/" || done[p] {
			return nil
		}
		// Parents first, each through the host's symlinks.
		if err := add(filepath.Dir(p)); err != nil {
			return err
		}
		done[p] = true
		fi, err := os.Lstat(p)
		if err != nil {
			return nil // a file the package list names but the host removed
		}
		link := ""
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			link, _ = os.Readlink(p)
		case fi.IsDir(), fi.Mode().IsRegular():
		default:
			return nil
		}
		h, err := tar.FileInfoHeader(fi, link)
		if err != nil {
			return err
		}
		h.Name, h.Uname, h.Gname, h.Uid, h.Gid = strings.TrimPrefix(p, "/"), "", "", 0, 0
		h.Mode &^= 0o6000
		if fi.IsDir() {
			h.Name += "/"
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if fi.Mode().IsRegular() {
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = io.Copy(tw, f)
			return err
		}
		return nil
	}
	// The merged-/usr symlinks first, so every path below is written under
	// its real directory and none runs through a symlink of the layer.
	for _, l := range []string{"/bin", "/sbin", "/lib", "/lib64"} {
		if err := add(l); err != nil {
			t.Fatal(err)
		}
	}
	canon := func(p string) string {
		d, err := filepath.EvalSymlinks(filepath.Dir(p))
		if err != nil {
			return p
		}
		return filepath.Join(d, filepath.Base(p))
	}
	var statusOut strings.Builder
	for _, p := range order {
		list, err := dpkgList(p)
		if err != nil {
			t.Fatalf("dpkg file list of %s: %v", p, err)
		}
		for _, f := range list {
			if err := add(canon(f)); err != nil {
				t.Fatal(err)
			}
		}
		statusOut.WriteString(status[p].raw)
		statusOut.WriteString("\n")
	}
	// update-alternatives links (libblas.so.3 for numpy...) are made by
	// maintainer scripts, not listed: carry those whose choice is in the
	// layer.
	alts, _ := os.ReadDir("/var/lib/dpkg/alternatives")
	for _, e := range alts {
		b, err := os.ReadFile(filepath.Join("/var/lib/dpkg/alternatives", e.Name()))
		if err != nil {
			continue
		}
		lines := strings.Split(string(b), "\n")
		if len(lines) < 2 {
			continue
		}
		// Master and slaves (name, link path), a blank line, then per
		// candidate: its path, its priority, one path per slave.
		names, paths := []string{e.Name()}, []string{lines[1]}
		i := 2
		for ; i+1 < len(lines) && lines[i] != ""; i += 2 {
			names, paths = append(names, lines[i]), append(paths, lines[i+1])
		}
		i++ // the blank line
		var choice []string
		for ; i+len(names) < len(lines) && lines[i] != ""; i += len(names) + 1 {
			cand := append([]string{lines[i]}, lines[i+2:i+1+len(names)]...)
			if done[canon(cand[0])] {
				choice = cand
				break
			}
		}
		if choice == nil {
			continue
		}
		if !done["/etc/alternatives"] {
			if err := add("/etc/alternatives"); err != nil {
				t.Fatal(err)
			}
		}
		for k, name := range names {
			if choice[k] == "" || !done[canon(choice[k])] {
				continue
			}
			tw.WriteHeader(&tar.Header{Name: "etc/alternatives/" + name, Typeflag: tar.TypeSymlink, Linkname: choice[k], Mode: 0o777})
			if err := add(canon(paths[k])); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := os.Lstat("/usr/bin/sh"); err == nil {
		if err := add(canon("/usr/bin/sh")); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{"var/lib/dpkg/", "var/lib/dpkg/info/", "tmp/", "etc/"} {
		if !done["/"+strings.TrimSuffix(d, "/")] {
			tw.WriteHeader(&tar.Header{Name: d, Typeflag: tar.TypeDir, Mode: 0o755})
			done["/"+strings.TrimSuffix(d, "/")] = true
		}
	}
	body := statusOut.String()
	tw.WriteHeader(&tar.Header{Name: "var/lib/dpkg/status", Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(body))})
	io.WriteString(tw, body)
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	t.Logf("base layer: %d packages, %d MB", len(order), buf.Len()>>20)
	return buf.Bytes()
}

type dpkgPkg struct {
	raw    string
	fields map[string]string
}

// readDpkgStatus reads the host's installed packages.
func readDpkgStatus(t *testing.T) map[string]dpkgPkg {
	t.Helper()
	b, err := os.ReadFile("/var/lib/dpkg/status")
	if err != nil {
		t.Skipf("no dpkg database on this host: %v", err)
	}
	out := map[string]dpkgPkg{}
	for _, stanza := range strings.Split(string(b), "\n\n") {
		f := map[string]string{}
		var last string
		sc := bufio.NewScanner(strings.NewReader(stanza))
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if strings.HasPrefix(line, " ") && last != "" {
				continue
			}
			if k, v, ok := strings.Cut(line, ":"); ok {
				last = k
				f[k] = strings.TrimSpace(v)
			}
		}
		if f["Package"] != "" && strings.HasSuffix(f["Status"], " installed") {
			out[f["Package"]] = dpkgPkg{raw: strings.TrimSpace(stanza) + "\n", fields: f}
		}
	}
	return out
}

// providers names an installed package that provides the virtual name.
func providers(status map[string]dpkgPkg, name string) string {
	for p, st := range status {
		for _, pr := range strings.Split(st.fields["Provides"], ",") {
			pr = strings.TrimSpace(pr)
			if i := strings.IndexAny(pr, " (:"); i >= 0 {
				pr = pr[:i]
			}
			if pr == name {
				return p
			}
		}
	}
	return ""
}

// dpkgList is the file list of an installed package.
func dpkgList(p string) ([]string, error) {
	var b []byte
	var err error
	for _, n := range []string{p, p + ":amd64", p + ":arm64", p + ":all"} {
		if b, err = os.ReadFile("/var/lib/dpkg/info/" + n + ".list"); err == nil {
			break
		}
	}
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil // a package that ships no files
		}
		return nil, err
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if l != "" && l != "/." {
			out = append(out, l)
		}
	}
	return out, nil
}
