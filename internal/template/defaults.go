package template

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// Labels an image may carry to give its template a start and a ready
// command (E2B's "start/ready commands"); the value is a JSON array or a
// shell command line.
const (
	LabelStartCmd = "sh.paddock.start-cmd"
	LabelReadyCmd = "sh.paddock.ready-cmd"
)

// MaxSandboxID is the highest uid/gid a sandbox maps.
const MaxSandboxID = 65535

// Port is an exposed port.
type Port struct {
	Port  int    `json:"port"`
	Proto string `json:"proto"` // "tcp" or "udp"
}

// Defaults are what an image template asks of the sandboxes made from
// it; phase 2's manager applies them at create (request values win).
type Defaults struct {
	Env        []string `json:"env,omitempty"` // KEY=VALUE in image order
	WorkingDir string   `json:"working_dir,omitempty"`
	// User is the image's USER as written; UID and GID are it resolved
	// against the image's own /etc/passwd and /etc/group (sandbox ids:
	// the sandbox maps 0-65535). UserError says why it did not resolve.
	User      string `json:"user,omitempty"`
	UID       int    `json:"uid"`
	GID       int    `json:"gid"`
	UserError string `json:"user_error,omitempty"`
	// UserName and Home are the passwd entry of UID, when it has one: a
	// sandbox's "user" identity takes them (docs/templates.md).
	UserName string `json:"user_name,omitempty"`
	Home     string `json:"home,omitempty"`

	ExposedPorts []Port            `json:"exposed_ports,omitempty"`
	Entrypoint   []string          `json:"entrypoint,omitempty"`
	Cmd          []string          `json:"cmd,omitempty"`
	Labels       map[string]string `json:"labels,omitempty"`
	StopSignal   string            `json:"stop_signal,omitempty"`

	// StartCmd runs at create, ReadyCmd is polled until it exits 0; the
	// sandbox is running only then. From the pull/build options, else the
	// sh.paddock.* labels, else (ReadyCmd only) the image's HEALTHCHECK.
	// ENTRYPOINT/CMD are not used as a start command: most images make
	// them an interactive shell or a one-shot program.
	StartCmd []string `json:"start_cmd,omitempty"`
	ReadyCmd []string `json:"ready_cmd,omitempty"`
}

// defaultsFrom derives Defaults from an image config and its layers
// (top first, for the user lookup). start/ready override the labels.
func defaultsFrom(cfg *v1.ConfigFile, lowers []string, start, ready []string) Defaults {
	c := cfg.Config
	d := Defaults{
		Env: append([]string(nil), c.Env...), WorkingDir: c.WorkingDir, User: c.User,
		Entrypoint: c.Entrypoint, Cmd: c.Cmd, StopSignal: c.StopSignal,
	}
	if len(c.Labels) > 0 {
		d.Labels = make(map[string]string, len(c.Labels))
		for k, v := range c.Labels {
			d.Labels[k] = v
		}
	}
	for p := range c.ExposedPorts {
		num, proto, _ := strings.Cut(p, "/")
		n, err := strconv.Atoi(num)
		if err != nil || n < 1 || n > 65535 {
			continue
		}
		if proto == "" {
			proto = "tcp"
		}
		d.ExposedPorts = append(d.ExposedPorts, Port{n, proto})
	}
	sort.Slice(d.ExposedPorts, func(i, j int) bool {
		a, b := d.ExposedPorts[i], d.ExposedPorts[j]
		return a.Port < b.Port || a.Port == b.Port && a.Proto < b.Proto
	})
	d.StartCmd, d.ReadyCmd = start, ready
	if d.StartCmd == nil {
		d.StartCmd = commandLabel(c.Labels[LabelStartCmd])
	}
	if d.ReadyCmd == nil {
		d.ReadyCmd = commandLabel(c.Labels[LabelReadyCmd])
	}
	if d.ReadyCmd == nil && c.Healthcheck != nil && len(c.Healthcheck.Test) > 1 {
		switch c.Healthcheck.Test[0] {
		case "CMD":
			d.ReadyCmd = c.Healthcheck.Test[1:]
		case "CMD-SHELL":
			d.ReadyCmd = []string{"/bin/sh", "-c", c.Healthcheck.Test[1]}
		}
	}
	d.UID, d.GID, d.UserError = resolveUser(c.User, lowers)
	if d.UID > 0 {
		uid := strconv.Itoa(d.UID)
		if e, ok := lookupAccount(lowers, "etc/passwd", func(f []string) bool { return f[2] == uid }); ok {
			d.UserName = e[0]
			if len(e) >= 6 && strings.HasPrefix(e[5], "/") {
				d.Home = e[5]
			}
		}
	}
	return d
}

func commandLabel(v string) []string {
	v = strings.TrimSpace(v)
	if v == "" {
		return nil
	}
	var argv []string
	if strings.HasPrefix(v, "[") && json.Unmarshal([]byte(v), &argv) == nil && len(argv) > 0 {
		return argv
	}
	return []string{"/bin/sh", "-c", v}
}

// resolveUser maps an image USER ("", "name", "uid", "uid:gid",
// "name:group") to sandbox ids using the image's own account files, the
// way a container runtime does.
func resolveUser(user string, lowers []string) (uid, gid int, problem string) {
	if user == "" {
		return 0, 0, ""
	}
	u, g, hasGroup := strings.Cut(user, ":")
	uid, gid = -1, -1
	if n, err := strconv.Atoi(u); err == nil {
		uid = n
		if e, ok := lookupAccount(lowers, "etc/passwd", func(f []string) bool { return f[2] == u }); ok {
			gid, _ = strconv.Atoi(e[3])
		} else {
			gid = n
		}
	} else if e, ok := lookupAccount(lowers, "etc/passwd", func(f []string) bool { return f[0] == u }); ok {
		uid, _ = strconv.Atoi(e[2])
		gid, _ = strconv.Atoi(e[3])
	} else {
		return -1, -1, "user " + strconv.Quote(u) + " is not in the image's /etc/passwd"
	}
	if hasGroup {
		if n, err := strconv.Atoi(g); err == nil {
			gid = n
		} else if e, ok := lookupAccount(lowers, "etc/group", func(f []string) bool { return f[0] == g }); ok {
			gid, _ = strconv.Atoi(e[2])
		} else {
			return -1, -1, "group " + strconv.Quote(g) + " is not in the image's /etc/group"
		}
	}
	if uid < 0 || uid > MaxSandboxID || gid < 0 || gid > MaxSandboxID {
		return -1, -1, "user " + strconv.Quote(user) + " is outside the sandbox's ids (0-65535)"
	}
	return uid, gid, ""
}

// lookupAccount finds the first line of file (in the merged view of
// lowers, top first) whose colon-separated fields match.
func lookupAccount(lowers []string, file string, match func([]string) bool) ([]string, bool) {
	f, err := openMerged(lowers, file)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, 4<<20))
	for sc.Scan() {
		fields := strings.Split(sc.Text(), ":")
		if len(fields) >= 4 && match(fields) {
			return fields, true
		}
	}
	return nil, false
}

var errWhiteout = errors.New("whited out")

// openMerged opens rel as the overlay of lowers would show it: the top
// layer having it wins; a whiteout, or an opaque or non-directory
// parent, hides the layers below. No symlink is followed (an image's
// /etc/passwd that is a symlink is not read: it could point at the
// host's).
func openMerged(lowers []string, rel string) (*os.File, error) {
	parts := strings.Split(rel, "/")
	for _, l := range lowers {
		hidden := false
		p := l
		for i, c := range parts {
			p = filepath.Join(p, c)
			fi, err := os.Lstat(p)
			if err != nil {
				break
			}
			if fi.Mode()&os.ModeCharDevice != 0 && fi.Mode()&os.ModeDevice != 0 {
				hidden = true // a whiteout
				break
			}
			if i < len(parts)-1 {
				if !fi.IsDir() {
					hidden = true
					break
				}
				if isOpaqueDir(p) {
					// This layer's copy of the directory hides the ones below.
					if f, err := openLeaf(filepath.Join(l, rel)); err == nil {
						return f, nil
					}
					return nil, errWhiteout
				}
				continue
			}
			return openLeaf(p)
		}
		if hidden {
			return nil, errWhiteout
		}
	}
	return nil, os.ErrNotExist
}

func openLeaf(p string) (*os.File, error) {
	return os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
}

// ResolveUser maps a USER or --chown value to sandbox ids through the
// account files of the layer stack lowers (top first); the builder uses
// it for RUN and COPY --chown.
func ResolveUser(user string, lowers []string) (uid, gid int, err error) {
	uid, gid, problem := resolveUser(user, lowers)
	if problem != "" {
		return -1, -1, errors.New(problem)
	}
	return uid, gid, nil
}
