package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/localtar"
)

type cpFlags struct {
	user    string
	tar     bool
	parents bool
}

func newCpCmd(e *env) *cobra.Command {
	var f cpFlags
	cmd := &cobra.Command{
		Use:   "cp [flags] SRC DST",
		Short: "Copy files and directories into, out of and between sandboxes",
		Long: `Copy a file or a directory. Either side may be ID:PATH, a path in a sandbox
(absolute, or relative to /workspace); the other a local path, or "-" for
standard input or output.

  paddock cp ./app ID:/workspace/        a directory, into /workspace/app
  paddock cp ID:/workspace/out.txt .     a file, into the current directory
  echo hi | paddock cp - ID:notes.txt    standard input into a file
  paddock cp ID:/workspace - > ws.tar    a directory to standard output, as tar
  tar c dir | paddock cp --tar - ID:/x   a tar stream extracted into /x

As with cp, a destination that is an existing directory receives the
source under its own name. Directories travel as tar streams; symlinks are
copied as symlinks. A local path containing ':' must start with ./ or /.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			src, dst := parseEndpoint(args[0]), parseEndpoint(args[1])
			return runCp(cmd.Context(), e, e.client(), src, dst, &f)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&f.user, "user", "", "act in the sandbox as root (default) or user (uid 1000)")
	fs.BoolVar(&f.tar, "tar", false, `with SRC "-": standard input is a tar (or tar.gz) stream to extract into DST`)
	fs.BoolVarP(&f.parents, "parents", "p", false, "create missing parent directories in the sandbox")
	return cmd
}

// endpoint is one side of a copy.
type endpoint struct {
	sandbox string // "" for a local path or standard I/O
	path    string
	stdio   bool
}

func (p endpoint) String() string {
	if p.sandbox != "" {
		return p.sandbox + ":" + p.path
	}
	if p.stdio {
		return "-"
	}
	return p.path
}

// parseEndpoint reads ID:PATH (ID without '/'), "-", or a local path.
func parseEndpoint(s string) endpoint {
	if s == "-" {
		return endpoint{stdio: true}
	}
	if id, p, ok := strings.Cut(s, ":"); ok && id != "" && !strings.Contains(id, "/") && !strings.HasPrefix(s, ".") {
		if p == "" {
			p = "/workspace"
		}
		return endpoint{sandbox: id, path: p}
	}
	return endpoint{path: s}
}

func runCp(ctx context.Context, e *env, c *client.Client, src, dst endpoint, f *cpFlags) error {
	switch {
	case src.stdio && dst.stdio:
		return errors.New("SRC and DST cannot both be -")
	case src.sandbox == "" && dst.sandbox == "":
		return errors.New("one side must be in a sandbox (ID:PATH)")
	case f.tar && !src.stdio:
		return errors.New("--tar applies to SRC -")
	}
	if dst.sandbox != "" {
		return cpUp(ctx, e, c, src, dst, f)
	}
	return cpDown(ctx, e, c, src, dst, f)
}

// sandboxTarget names where a source called base lands: inside dst if dst
// is an existing directory (or written with a trailing /), else dst.
func sandboxTarget(ctx context.Context, c *client.Client, dst endpoint, base string, user string) (string, bool, error) {
	fi, err := c.StatFile(ctx, dst.sandbox, client.StatRequest{Path: dst.path, Follow: true, User: user})
	switch {
	case err == nil && fi.Type == client.TypeDir:
		return path.Join(dst.path, base), true, nil
	case err == nil:
		return dst.path, true, nil
	case client.IsNotFound(err):
		if strings.HasSuffix(dst.path, "/") {
			return path.Join(dst.path, base), false, nil
		}
		return dst.path, false, nil
	}
	return "", false, err
}

func cpUp(ctx context.Context, e *env, c *client.Client, src, dst endpoint, f *cpFlags) error {
	switch {
	case src.stdio && f.tar:
		_, err := c.UploadArchive(ctx, dst.sandbox, client.ExtractRequest{Path: dst.path, User: f.user}, e.stdin, -1)
		return err
	case src.stdio:
		if strings.HasSuffix(dst.path, "/") {
			return fmt.Errorf("%s: name the file to write standard input to", dst)
		}
		_, err := c.WriteFile(ctx, dst.sandbox, client.WriteRequest{Path: dst.path, User: f.user, Parents: f.parents}, e.stdin, -1)
		return err
	case src.sandbox != "":
		return cpBetween(ctx, c, src, dst, f)
	}
	st, err := os.Stat(src.path)
	if err != nil {
		return err
	}
	base := filepath.Base(filepath.Clean(src.path))
	target, exists, err := sandboxTarget(ctx, c, dst, base, f.user)
	if err != nil {
		return err
	}
	if f.parents && !exists {
		if _, err := c.MakeDir(ctx, dst.sandbox, client.MkdirRequest{Path: path.Dir(target), Parents: true, User: f.user}); err != nil {
			return err
		}
	}
	if st.IsDir() {
		pr, pw := io.Pipe()
		go func() { pw.CloseWithError(localtar.Write(pw, src.path, e.stderr)) }()
		_, err := c.UploadArchive(ctx, dst.sandbox, client.ExtractRequest{Path: target, User: f.user}, pr, -1)
		pr.CloseWithError(io.ErrClosedPipe)
		return err
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file or directory", src.path)
	}
	file, err := os.Open(src.path)
	if err != nil {
		return err
	}
	defer file.Close()
	perm := uint32(st.Mode().Perm())
	if st.Mode()&os.ModeSticky != 0 {
		perm |= 0o1000
	}
	mode := fmt.Sprintf("%04o", perm)
	_, err = c.WriteFile(ctx, dst.sandbox, client.WriteRequest{Path: target, User: f.user, Mode: mode}, file, st.Size())
	return err
}

// cpBetween copies from one sandbox path to another, streaming.
func cpBetween(ctx context.Context, c *client.Client, src, dst endpoint, f *cpFlags) error {
	fi, err := c.StatFile(ctx, src.sandbox, client.StatRequest{Path: src.path, Follow: true, User: f.user})
	if err != nil {
		return err
	}
	target, exists, err := sandboxTarget(ctx, c, dst, path.Base(fi.Path), f.user)
	if err != nil {
		return err
	}
	if f.parents && !exists {
		if _, err := c.MakeDir(ctx, dst.sandbox, client.MkdirRequest{Path: path.Dir(target), Parents: true, User: f.user}); err != nil {
			return err
		}
	}
	if fi.Type == client.TypeDir {
		body, err := c.DownloadArchive(ctx, src.sandbox, client.ArchiveRequest{Path: src.path, User: f.user})
		if err != nil {
			return err
		}
		defer body.Close()
		_, err = c.UploadArchive(ctx, dst.sandbox, client.ExtractRequest{Path: target, User: f.user}, body, -1)
		return err
	}
	rf, err := c.OpenFile(ctx, src.sandbox, client.ReadFileRequest{Path: src.path, User: f.user})
	if err != nil {
		return err
	}
	defer rf.Body.Close()
	_, err = c.WriteFile(ctx, dst.sandbox, client.WriteRequest{Path: target, User: f.user, Mode: safeMode(rf.Mode)}, rf.Body, rf.Length)
	return err
}

// safeMode drops setuid/setgid from an octal mode (the API refuses them).
func safeMode(m string) string {
	var v uint32
	if _, err := fmt.Sscanf(m, "%o", &v); err != nil {
		return ""
	}
	return fmt.Sprintf("%04o", v&0o1777)
}

func cpDown(ctx context.Context, e *env, c *client.Client, src, dst endpoint, f *cpFlags) error {
	fi, err := c.StatFile(ctx, src.sandbox, client.StatRequest{Path: src.path, Follow: true, User: f.user})
	if err != nil {
		return err
	}
	isDir := fi.Type == client.TypeDir
	if dst.stdio {
		if isDir {
			body, err := c.DownloadArchive(ctx, src.sandbox, client.ArchiveRequest{Path: src.path, User: f.user})
			if err != nil {
				return err
			}
			defer body.Close()
			_, err = io.Copy(e.stdout, body)
			return err
		}
		rf, err := c.OpenFile(ctx, src.sandbox, client.ReadFileRequest{Path: src.path, User: f.user})
		if err != nil {
			return err
		}
		defer rf.Body.Close()
		_, err = io.Copy(e.stdout, rf.Body)
		return err
	}
	target := dst.path
	if st, err := os.Stat(dst.path); err == nil && st.IsDir() {
		target = filepath.Join(dst.path, path.Base(fi.Path))
	} else if err == nil && isDir {
		return fmt.Errorf("%s exists and is not a directory", dst.path)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if isDir {
		body, err := c.DownloadArchive(ctx, src.sandbox, client.ArchiveRequest{Path: src.path, User: f.user})
		if err != nil {
			return err
		}
		defer body.Close()
		if err := os.MkdirAll(target, 0o755); err != nil {
			return err
		}
		return localtar.Extract(body, target, e.stderr)
	}
	rf, err := c.OpenFile(ctx, src.sandbox, client.ReadFileRequest{Path: src.path, User: f.user})
	if err != nil {
		return err
	}
	defer rf.Body.Close()
	return writeLocalFile(target, rf.Body, fi.Perm().Perm())
}

// writeLocalFile writes r to target through a temporary file renamed into
// place, so an interrupted copy leaves no partial file.
func writeLocalFile(target string, r io.Reader, mode os.FileMode) error {
	dir := filepath.Dir(target)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(target)+".paddock-*")
	if err != nil {
		return err
	}
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err := io.CopyBuffer(tmp, r, make([]byte, 1<<20)); err != nil {
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), target); err != nil {
		return err
	}
	ok = true
	return nil
}
