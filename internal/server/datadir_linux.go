package server

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/paddockhq/paddock/internal/audit"
	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/secret"
)

// Local information disclosure through file modes (issue 14: a data
// directory made 0755 by hand, or by an older release, was kept, and the
// SQLite files were 0644 — every sandbox spec, env values included, was
// readable by any local user; the audit signing key was never checked).
// At start the server makes the data directory and the directories that
// hold keys, records and guest sockets 0700 and its keys and databases
// 0600, logging each change; what another user owns, or a symbolic link
// where a key should be, is refused with the command that fixes it: the
// server cannot trust a file someone else can replace.

// sensitiveDirs are the data directory's subdirectories that must be
// 0700 (the data directory itself is too).
var sensitiveDirs = []string{"audit", "run"}

// sensitiveFiles are the data directory's files that must be 0600.
var sensitiveFiles = []string{
	"paddock.db", "paddock.db-wal", "paddock.db-shm", "paddock.db-journal", "paddock.lock",
	"admin.key", auth.SecretFile, secret.KeyFile,
	filepath.Join("audit", audit.KeyFile), filepath.Join("audit", audit.HeadFile),
}

// permFix is one mode the server changed.
type permFix struct {
	Path string `json:"path"`
	From string `json:"from"`
	To   string `json:"to"`
}

// secureDataDir creates dir (0700) if need be and enforces the modes
// above; it returns what it changed. Audit segments are made 0600 too
// (they hold every request's arguments), the public key excepted.
func secureDataDir(dir string) ([]permFix, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	var fixes []permFix
	// The directory itself first: once it is 0700 and ours, nobody else
	// can swap an entry under it between the checks below and the chmods.
	if err := enforce(dir, dir, true, 0o700, &fixes); err != nil {
		return nil, err
	}
	for _, d := range sensitiveDirs {
		if err := enforce(dir, filepath.Join(dir, d), true, 0o700, &fixes); err != nil {
			return nil, err
		}
	}
	files := append([]string{}, sensitiveFiles...)
	if ents, err := os.ReadDir(filepath.Join(dir, "audit")); err == nil {
		for _, e := range ents {
			if n := e.Name(); n != audit.PubKeyFile && e.Type().IsRegular() {
				files = append(files, filepath.Join("audit", n))
			}
		}
	}
	for _, f := range files {
		if err := enforce(dir, filepath.Join(dir, f), false, 0o600, &fixes); err != nil {
			return nil, err
		}
	}
	return fixes, nil
}

// enforce makes path (if it exists) mode want, refusing one that is not
// the server's, or not of the kind expected. The directory itself is
// followed if it is a link (a data directory elsewhere, linked to); an
// entry in it never is.
func enforce(dataDir, path string, isDir bool, want fs.FileMode, fixes *[]permFix) error {
	stat := os.Lstat
	if path == dataDir {
		stat = os.Stat
	}
	fi, err := stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("data directory: %w", err)
	}
	kind := "a regular file"
	if isDir {
		kind = "a directory"
	}
	switch {
	case isDir && !fi.IsDir(), !isDir && !fi.Mode().IsRegular():
		return fmt.Errorf("%s is not %s (%s): the server does not follow links or special files in its data directory %s; move it away", path, kind, fi.Mode().Type(), dataDir)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		chmod := "600"
		if isDir {
			chmod = "700"
		}
		return fmt.Errorf("%s is owned by uid %d, not by the server's uid %d: whoever owns it can change what the server trusts; if that is unintended, fix it with: chown %d:%d %s && chmod %s %s",
			path, st.Uid, os.Geteuid(), os.Geteuid(), os.Getegid(), path, chmod, path)
	}
	if fi.Mode().Perm() == want {
		return nil
	}
	if err := os.Chmod(path, want); err != nil {
		return fmt.Errorf("%s has mode %#o and cannot be made %#o (%w): fix it with: chmod %o %s", path, fi.Mode().Perm(), want, err, want, path)
	}
	*fixes = append(*fixes, permFix{Path: path, From: fmt.Sprintf("%#o", fi.Mode().Perm()), To: fmt.Sprintf("%#o", want)})
	return nil
}
