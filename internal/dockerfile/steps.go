package dockerfile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/moby/buildkit/frontend/dockerfile/instructions"
	"github.com/moby/patternmatcher"
	"github.com/moby/patternmatcher/ignorefile"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/layers"
	"github.com/paddockhq/paddock/internal/template"
)

const (
	outputTailBytes = 4 << 10
	maxFetchBytes   = 1 << 30
)

type expandable interface {
	Expand(instructions.SingleWordExpander) error
}

type located interface {
	Location() []parserRange
}

func (bd *build) command(ctx context.Context, s *stage, c instructions.Command) error {
	line := 0
	if l, ok := c.(located); ok {
		line = lineOf(l.Location())
	}
	src := fmt.Sprint(c)
	if ex, ok := c.(expandable); ok {
		if _, isRun := c.(*instructions.RunCommand); !isRun {
			if err := ex.Expand(bd.expander(s)); err != nil {
				return bd.stepErr(line, err)
			}
		}
	}
	ev := Event{Step: bd.step, Steps: bd.steps, Stage: s.name, Instruction: src}
	switch c := c.(type) {
	case *instructions.EnvCommand:
		for _, kv := range c.Env {
			s.setEnv(kv.Key, kv.Value)
		}
		s.key = chain(s.key, []string{"env", src, strings.Join(s.cfg.Config.Env, "\x00")})
	case *instructions.ArgCommand:
		for _, kv := range c.Args {
			v, given := bd.req.BuildArgs[kv.Key]
			if !given {
				if def, ok := bd.metaEnv[kv.Key]; ok && kv.Value == nil {
					v = def
				} else {
					v = kv.ValueString()
				}
			}
			if _, seen := s.args[kv.Key]; !seen {
				s.argOrder = append(s.argOrder, kv.Key)
			}
			s.args[kv.Key] = v
			s.key = chain(s.key, []string{"arg", kv.Key, v})
		}
	case *instructions.WorkdirCommand:
		p := c.Path
		if !path.IsAbs(p) {
			p = path.Join("/", s.cfg.Config.WorkingDir, p)
		}
		s.cfg.Config.WorkingDir = path.Clean(p)
		s.key = chain(s.key, []string{"workdir", s.cfg.Config.WorkingDir})
		if err := bd.workdirLayer(ctx, s, &ev); err != nil {
			return bd.wrapStep(line, err)
		}
		bd.log(ev)
		return nil
	case *instructions.UserCommand:
		s.cfg.Config.User = c.User
		s.key = chain(s.key, []string{"user", c.User})
	case *instructions.LabelCommand:
		if s.cfg.Config.Labels == nil {
			s.cfg.Config.Labels = map[string]string{}
		}
		for _, kv := range c.Labels {
			s.cfg.Config.Labels[kv.Key] = kv.Value
		}
	case *instructions.MaintainerCommand:
		if s.cfg.Config.Labels == nil {
			s.cfg.Config.Labels = map[string]string{}
		}
		s.cfg.Config.Labels["maintainer"] = c.Maintainer
	case *instructions.ExposeCommand:
		if s.cfg.Config.ExposedPorts == nil {
			s.cfg.Config.ExposedPorts = map[string]struct{}{}
		}
		for _, p := range c.Ports {
			for _, w := range strings.Fields(p) {
				spec, err := portSpec(w)
				if err != nil {
					return bd.stepErr(line, err)
				}
				s.cfg.Config.ExposedPorts[spec] = struct{}{}
			}
		}
	case *instructions.EntrypointCommand:
		s.cfg.Config.Entrypoint = s.cmdline(c.ShellDependantCmdLine)
		if !s.cmdSet {
			s.cfg.Config.Cmd = nil // Docker: a new ENTRYPOINT drops an inherited CMD
		}
	case *instructions.CmdCommand:
		s.cfg.Config.Cmd = s.cmdline(c.ShellDependantCmdLine)
		s.cmdSet = true
	case *instructions.ShellCommand:
		s.shell = append([]string(nil), c.Shell...)
		s.key = chain(s.key, []string{"shell", strings.Join(c.Shell, "\x00")})
	case *instructions.StopSignalCommand:
		s.cfg.Config.StopSignal = c.Signal
	case *instructions.VolumeCommand:
		if s.cfg.Config.Volumes == nil {
			s.cfg.Config.Volumes = map[string]struct{}{}
		}
		for _, v := range c.Volumes {
			s.cfg.Config.Volumes[v] = struct{}{}
		}
	case *instructions.HealthCheckCommand:
		if c.Health != nil {
			s.cfg.Config.Healthcheck = &v1.HealthConfig{Test: c.Health.Test, Interval: c.Health.Interval, Timeout: c.Health.Timeout, StartPeriod: c.Health.StartPeriod, Retries: c.Health.Retries}
		}
	case *instructions.OnbuildCommand:
		s.cfg.Config.OnBuild = append(s.cfg.Config.OnBuild, c.Expression)
	case *instructions.RunCommand:
		if err := bd.runStep(ctx, s, c, line, &ev); err != nil {
			return err
		}
		s.history(c, false)
		return nil
	case *instructions.CopyCommand:
		if c.Parents {
			return bd.stepErr(line, errors.New("COPY --parents is not supported"))
		}
		if err := bd.copyStep(ctx, s, line, c.SourcesAndDest, c.From, c.Chown, c.Chmod, c.ExcludePatterns, false, &ev); err != nil {
			return err
		}
		s.history(c, false)
		return nil
	case *instructions.AddCommand:
		if c.Checksum != "" || c.KeepGitDir != nil {
			return bd.stepErr(line, errors.New("ADD --checksum and git sources are not supported"))
		}
		if err := bd.copyStep(ctx, s, line, c.SourcesAndDest, "", c.Chown, c.Chmod, c.ExcludePatterns, true, &ev); err != nil {
			return err
		}
		s.history(c, false)
		return nil
	default:
		return bd.stepErr(line, fmt.Errorf("%s is not supported", strings.ToUpper(c.Name())))
	}
	s.history(c, true)
	bd.log(ev)
	return nil
}

func (s *stage) cmdline(c instructions.ShellDependantCmdLine) []string {
	if c.PrependShell {
		return append(append([]string(nil), s.shell...), strings.Join(c.CmdLine, " "))
	}
	return append([]string(nil), c.CmdLine...)
}

func portSpec(w string) (string, error) {
	num, proto, _ := strings.Cut(strings.ToLower(w), "/")
	if proto == "" {
		proto = "tcp"
	}
	n, err := strconv.Atoi(num)
	if err != nil || n < 1 || n > 65535 || proto != "tcp" && proto != "udp" && proto != "sctp" {
		return "", fmt.Errorf("EXPOSE %q: want PORT[/tcp|udp]", w)
	}
	return strconv.Itoa(n) + "/" + proto, nil
}

// runStep executes RUN through the Runner and turns its upper directory
// into a layer.
func (bd *build) runStep(ctx context.Context, s *stage, c *instructions.RunCommand, line int, ev *Event) error {
	if len(c.FlagsUsed) > 0 {
		return bd.stepErr(line, fmt.Errorf("RUN --%s is not supported", c.FlagsUsed[0]))
	}
	if len(c.Files) > 0 {
		return bd.stepErr(line, errors.New("RUN with a heredoc is not supported yet"))
	}
	argv := s.cmdline(c.ShellDependantCmdLine)
	env := s.runEnv()
	wd := s.cfg.Config.WorkingDir
	if wd == "" {
		wd = "/"
	}
	v := s.view()
	uid, gid, err := template.ResolveUser(s.cfg.Config.User, v)
	if err != nil {
		return bd.stepErr(line, fmt.Errorf("USER %s: %v", s.cfg.Config.User, err))
	}
	key := chain(s.key, map[string]any{"run": argv, "env": env, "wd": wd, "uid": uid, "gid": gid, "net": bd.req.Network, "allow": bd.req.Allow})
	if bd.fromCache(s, key, ev) {
		return nil
	}
	if bd.b.o.Runner == nil {
		return bd.wrapStep(line, errs.New(errs.CodeUnsupported, "RUN is not available on this server (its builder has no sandbox runner yet)"))
	}
	upper, err := os.MkdirTemp(bd.b.o.TmpDir, "run-")
	if err != nil {
		return bd.wrapStep(line, err)
	}
	defer os.RemoveAll(upper)
	bd.log(*ev)
	tail := &tailWriter{max: outputTailBytes, emit: func(p string) {
		bd.log(Event{Step: bd.step, Steps: bd.steps, Stage: s.name, Output: p})
	}}
	res, err := bd.b.o.Runner.Run(ctx, RunRequest{
		Lowers: v, Upper: upper, Cmd: argv, Env: env, WorkDir: wd, UID: uid, GID: gid,
		Network: bd.req.Network, Allow: bd.req.Allow, Output: tail,
	})
	if err != nil {
		if t := tail.String(); t != "" && ctx.Err() == nil {
			err = fmt.Errorf("%w\n%s", err, t)
		}
		return bd.wrapStep(line, err)
	}
	if res.ExitCode != 0 {
		se := &StepError{Step: bd.step, Line: line, Instruction: fmt.Sprint(c), ExitCode: res.ExitCode, OutputTail: tail.String()}
		return errs.Wrap(errs.CodeInvalid, se, "step %d/%d (line %d) %s: exit code %d\n%s", bd.step, bd.steps, line, firstLine(fmt.Sprint(c)), res.ExitCode, se.OutputTail)
	}
	l, empty, err := bd.layerFrom(ctx, upper, layers.TarOptions{IDBase: res.IDBase, IDRange: res.IDRange})
	if err != nil {
		return bd.wrapStep(line, err)
	}
	return bd.commit(s, key, l, empty)
}

// fromCache applies a cached step to s.
func (bd *build) fromCache(s *stage, key string, ev *Event) bool {
	if bd.req.NoCache {
		return false
	}
	l, has, ok := bd.b.cache.get(key, bd.lease)
	if !ok {
		return false
	}
	if has {
		s.layers = append(s.layers, l)
	}
	s.key = key
	ev.Cached = true
	bd.log(*ev)
	return true
}

func (bd *build) commit(s *stage, key string, l layers.Layer, empty bool) error {
	diff := ""
	if !empty {
		s.layers = append(s.layers, l)
		diff = l.DiffID
	}
	s.key = key
	if err := bd.b.cache.put(key, diff); err != nil {
		return errs.Wrap(errs.CodeInternal, err, "cannot record the step in the build cache")
	}
	return nil
}

// layerFrom stores the tree at dir as a layer (through the canonical tar
// and the hardened extractor: a RUN's upper directory is written by the
// untrusted build). empty reports a tree with no entries.
func (bd *build) layerFrom(ctx context.Context, dir string, o layers.TarOptions) (layers.Layer, bool, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return layers.Layer{}, false, err
	}
	if len(ents) == 0 {
		return layers.Layer{}, true, nil
	}
	pr, pw := io.Pipe()
	var werr error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		werr = layers.WriteTar(pw, dir, o)
		pw.CloseWithError(werr)
	}()
	l, err := bd.b.o.Store.Put(ctx, bd.lease, "", pr, bd.b.o.Limits)
	pr.CloseWithError(errors.New("reader done"))
	wg.Wait()
	if werr != nil {
		return layers.Layer{}, false, werr
	}
	return l, false, err
}

// workdirLayer adds a layer creating WORKDIR when the image lacks it.
func (bd *build) workdirLayer(ctx context.Context, s *stage, ev *Event) error {
	wd := strings.TrimPrefix(s.cfg.Config.WorkingDir, "/")
	if wd == "" {
		return nil
	}
	v := s.view()
	if _, fi, err := v.lstat(wd); err == nil && fi.IsDir() {
		return nil
	}
	key := chain(s.key, "mkdir")
	if bd.fromCache(s, key, ev) {
		return nil
	}
	stageDir, err := os.MkdirTemp(bd.b.o.TmpDir, "workdir-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(stageDir)
	times := map[string]time.Time{}
	if err := mkParents(stageDir, v, wd+"/x", times); err != nil {
		return err
	}
	restoreTimes(stageDir, times)
	l, empty, err := bd.layerFrom(ctx, stageDir, layers.TarOptions{})
	if err != nil {
		return err
	}
	return bd.commit(s, key, l, empty)
}

// copyStep runs COPY and ADD.
func (bd *build) copyStep(ctx context.Context, s *stage, line int, sd instructions.SourcesAndDest, from, chown, chmod string, excludes []string, isAdd bool, ev *Event) error {
	if len(excludes) > 0 {
		return bd.stepErr(line, errors.New("--exclude is not supported"))
	}
	if len(sd.SourceContents) > 0 {
		return bd.stepErr(line, errors.New("COPY with a heredoc is not supported yet"))
	}
	v := s.view()
	cp := &copier{budget: bd.limits().MaxBytes, buf: make([]byte, 256<<10)}
	if chown != "" {
		uid, gid, err := template.ResolveUser(chown, v)
		if err != nil {
			return bd.stepErr(line, fmt.Errorf("--chown=%s: %v", chown, err))
		}
		cp.own = owner{true, uid, gid}
	}
	if chmod != "" {
		m, err := strconv.ParseUint(chmod, 8, 32)
		if err != nil || m > 0o7777 {
			return bd.stepErr(line, fmt.Errorf("--chmod=%s: want an octal mode", chmod))
		}
		mode := os.FileMode(m & 0o777)
		if m&0o4000 != 0 {
			mode |= os.ModeSetuid
		}
		if m&0o2000 != 0 {
			mode |= os.ModeSetgid
		}
		if m&0o1000 != 0 {
			mode |= os.ModeSticky
		}
		cp.chmod = &mode
	}
	var srcView view
	srcKey := ""
	if from != "" {
		fs, ok := bd.stages[strings.ToLower(from)]
		if !ok {
			return bd.stepErr(line, fmt.Errorf("COPY --from=%s: no earlier stage has that name (images as --from are not supported)", from))
		}
		srcView = fs.view()
		srcKey = fs.key
	} else {
		ign, err := bd.dockerignore()
		if err != nil {
			return bd.stepErr(line, err)
		}
		cp.ignore = ign
	}
	dest := sd.DestPath
	if !path.IsAbs(dest) {
		dest = path.Join("/", s.cfg.Config.WorkingDir, dest)
	}
	// Docker: a destination is a directory when it ends in "/" (or is
	// "."), when there are several sources, or when the image has a
	// directory there.
	destIsDir := strings.HasSuffix(sd.DestPath, "/") || sd.DestPath == "." || strings.HasSuffix(sd.DestPath, "/.") || len(sd.SourcePaths) > 1
	if _, fi, err := v.lstat(strings.TrimPrefix(dest, "/")); err == nil && fi.IsDir() {
		destIsDir = true
	}
	stageDir, err := os.MkdirTemp(bd.b.o.TmpDir, "copy-")
	if err != nil {
		return bd.wrapStep(line, err)
	}
	defer os.RemoveAll(stageDir)
	times := map[string]time.Time{}
	fetched := false
	for _, srcPat := range sd.SourcePaths {
		if isURL(srcPat) {
			fetched = true
			if !isAdd {
				return bd.stepErr(line, fmt.Errorf("COPY cannot fetch URLs (%s); use ADD", srcPat))
			}
			if err := bd.fetch(ctx, srcPat, dest, destIsDir, stageDir, v, cp, times); err != nil {
				return bd.wrapStep(line, err)
			}
			continue
		}
		matches, err := bd.sources(srcView, srcPat)
		if err != nil {
			return bd.stepErr(line, err)
		}
		if cp.ignore != nil {
			// .dockerignore'd files are not in the context at all.
			kept := matches[:0]
			for _, m := range matches {
				if !cp.ignore(m.rel) {
					kept = append(kept, m)
				}
			}
			if len(kept) == 0 {
				return bd.stepErr(line, fmt.Errorf("%s: not found in the build context (excluded by .dockerignore)", srcPat))
			}
			matches = kept
		}
		if len(matches) > 1 {
			destIsDir = true
		}
		for _, m := range matches {
			if isAdd && srcView == nil && isArchive(m.host) {
				return bd.stepErr(line, fmt.Errorf("ADD %s: unpacking local archives is not supported yet (Docker would unpack it); COPY it and unpack it in a RUN", m.rel))
			}
			if err := bd.copyOne(srcView, m, dest, destIsDir, stageDir, v, cp, times); err != nil {
				if errors.Is(err, errBudget) {
					return errs.Wrap(errs.CodeTooLarge, err, "step %d/%d (line %d): the copied files are over the layer size limit", bd.step, bd.steps, line)
				}
				return bd.stepErr(line, err)
			}
		}
	}
	restoreTimes(stageDir, times)
	// The key is the content itself: the canonical tar's digest.
	h := newDigester()
	if err := layers.WriteTar(h, stageDir, layers.TarOptions{}); err != nil {
		return bd.wrapStep(line, err)
	}
	key := chain(s.key, []string{"copy", h.sum(), srcKey})
	if fetched {
		// A download is the network policy's: the same content reached
		// under another policy is another step.
		key = chain(key, map[string]any{"net": bd.req.Network, "allow": bd.req.Allow})
	}
	if bd.fromCache(s, key, ev) {
		return nil
	}
	bd.log(*ev)
	l, empty, err := bd.layerFrom(ctx, stageDir, layers.TarOptions{})
	if err != nil {
		return bd.wrapStep(line, err)
	}
	return bd.commit(s, key, l, empty)
}

func (bd *build) limits() layers.Limits {
	l := bd.b.o.Limits
	if l.MaxBytes <= 0 {
		l.MaxBytes = layers.DefaultMaxBytes
	}
	return l
}

func isURL(s string) bool { return strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://") }

// source is one match of a COPY source: a host path and its path
// relative to the context or stage root.
type source struct {
	host, rel string
}

// sources expands a source pattern against the context (or a stage's
// view). Patterns are cleaned against "/", so ".." cannot leave the
// context (path traversal class).
func (bd *build) sources(v view, pat string) ([]source, error) {
	clean := strings.TrimPrefix(path.Clean("/"+pat), "/")
	if v != nil {
		p, _, err := v.lstat(clean)
		if err != nil {
			return nil, fmt.Errorf("%s: not found in the source stage", pat)
		}
		return []source{{p, clean}}, nil
	}
	if bd.req.Context == "" {
		return nil, fmt.Errorf("%s: this build has no context", pat)
	}
	if !strings.ContainsAny(clean, "*?[") {
		p := filepath.Join(bd.req.Context, clean)
		if err := noSymlinkParents(bd.req.Context, clean); err != nil {
			return nil, fmt.Errorf("%s: %v", pat, err)
		}
		if _, err := os.Lstat(p); err != nil {
			return nil, fmt.Errorf("%s: not found in the build context", pat)
		}
		return []source{{p, clean}}, nil
	}
	matches, err := filepath.Glob(filepath.Join(bd.req.Context, clean))
	if err != nil {
		return nil, fmt.Errorf("%s: bad pattern", pat)
	}
	var out []source
	for _, m := range matches {
		rel, err := filepath.Rel(bd.req.Context, m)
		if err != nil || strings.HasPrefix(rel, "..") || noSymlinkParents(bd.req.Context, filepath.ToSlash(rel)) != nil {
			continue
		}
		out = append(out, source{m, filepath.ToSlash(rel)})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no file in the build context matches", pat)
	}
	return out, nil
}

func (bd *build) copyOne(v view, src source, dest string, destIsDir bool, stageDir string, img view, cp *copier, times map[string]time.Time) error {
	fi, err := os.Lstat(src.host)
	if err != nil {
		return err
	}
	target := strings.TrimPrefix(dest, "/")
	if fi.IsDir() {
		// A directory's contents go into dest.
		if target == "" {
			return copyDirInto(cp, src, stageDir, v)
		}
		if err := mkParents(stageDir, img, target+"/x", times); err != nil {
			return err
		}
		return cp.copyEntry(src.host, filepath.Join(stageDir, target), v, src.rel)
	}
	if destIsDir || target == "" {
		target = path.Join(target, path.Base(src.rel))
	}
	if err := mkParents(stageDir, img, target, times); err != nil {
		return err
	}
	dst := filepath.Join(stageDir, target)
	os.RemoveAll(dst)
	return cp.copyEntry(src.host, dst, v, src.rel)
}

func copyDirInto(cp *copier, src source, stageDir string, v view) error {
	ents, err := os.ReadDir(src.host)
	if err != nil {
		return err
	}
	for _, e := range ents {
		rel := path.Join(src.rel, e.Name())
		if v == nil && cp.ignore != nil && cp.ignore(rel) {
			continue
		}
		if err := cp.copyEntry(filepath.Join(src.host, e.Name()), filepath.Join(stageDir, e.Name()), v, rel); err != nil {
			return err
		}
	}
	return nil
}

// dockerignore loads the context's .dockerignore (moby/patternmatcher:
// Docker's own semantics, "!" exceptions included).
func (bd *build) dockerignore() (func(string) bool, error) {
	if bd.req.Context == "" {
		return nil, nil
	}
	f, err := os.Open(filepath.Join(bd.req.Context, ".dockerignore"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	pats, err := ignorefile.ReadAll(io.LimitReader(f, 1<<20))
	if err != nil {
		return nil, fmt.Errorf(".dockerignore: %v", err)
	}
	pm, err := patternmatcher.New(pats)
	if err != nil {
		return nil, fmt.Errorf(".dockerignore: %v", err)
	}
	return func(rel string) bool {
		m, _ := pm.MatchesOrParentMatches(rel)
		return m
	}, nil
}

// fetch runs ADD <url> through the Fetcher.
func (bd *build) fetch(ctx context.Context, url, dest string, destIsDir bool, stageDir string, img view, cp *copier, times map[string]time.Time) error {
	if bd.b.o.Fetcher == nil {
		return errs.New(errs.CodeForbidden, "ADD of a URL is not allowed on this server")
	}
	var buf bytes.Buffer
	name, err := bd.b.o.Fetcher.Fetch(ctx, url, NetPolicy{Mode: bd.req.Network, Allow: bd.req.Allow}, &limitWriter{w: &buf, left: min(cp.budget, maxFetchBytes)}, min(cp.budget, maxFetchBytes))
	if err != nil {
		return err
	}
	target := strings.TrimPrefix(dest, "/")
	if destIsDir || strings.HasSuffix(dest, "/") || target == "" {
		base := path.Base(path.Clean("/" + name))
		if base == "/" || base == "." {
			base = "download"
		}
		target = path.Join(target, base)
	}
	if err := mkParents(stageDir, img, target, times); err != nil {
		return err
	}
	own := cp.own
	mode := os.FileMode(0o600) // Docker: ADD <url> files are 0600
	if cp.chmod != nil {
		mode = *cp.chmod
	}
	p := filepath.Join(stageDir, target)
	if err := os.WriteFile(p, buf.Bytes(), 0o600); err != nil {
		return err
	}
	if own.set {
		os.Chown(p, own.uid, own.gid)
	}
	os.Chtimes(p, time.Unix(0, 0), time.Unix(0, 0))
	return os.Chmod(p, mode)
}

type limitWriter struct {
	w    io.Writer
	left int64
}

func (l *limitWriter) Write(p []byte) (int, error) {
	if int64(len(p)) > l.left {
		return 0, errs.New(errs.CodeTooLarge, "the downloaded file is over the layer size limit")
	}
	l.left -= int64(len(p))
	return l.w.Write(p)
}

// tailWriter passes output on and keeps its last max bytes.
type tailWriter struct {
	mu   sync.Mutex
	buf  []byte
	max  int
	emit func(string)
}

func (t *tailWriter) Write(p []byte) (int, error) {
	t.mu.Lock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = append([]byte(nil), t.buf[len(t.buf)-t.max:]...)
	}
	t.mu.Unlock()
	if t.emit != nil {
		t.emit(string(p))
	}
	return len(p), nil
}

func (t *tailWriter) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

// isArchive reports a tar, gzip, bzip2, xz or zstd file, which Docker's
// ADD would unpack.
func isArchive(p string) bool {
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 512)
	n, _ := io.ReadFull(f, head)
	head = head[:n]
	for _, magic := range [][]byte{{0x1f, 0x8b}, []byte("BZh"), {0xfd, '7', 'z', 'X', 'Z', 0}, {0x28, 0xb5, 0x2f, 0xfd}} {
		if bytes.HasPrefix(head, magic) {
			return true
		}
	}
	return len(head) >= 262 && string(head[257:262]) == "ustar"
}

// noSymlinkParents refuses a context path whose directories include a
// symlink: the context is untrusted (phase 2 receives it as an upload),
// and "COPY link/secret" with link -> /etc would read the host's files
// (symlink path traversal class). The last component may be a symlink:
// it is copied as one.
func noSymlinkParents(root, rel string) error {
	parts := strings.Split(rel, "/")
	p := root
	for _, c := range parts[:len(parts)-1] {
		p = filepath.Join(p, c)
		fi, err := os.Lstat(p)
		if err != nil {
			return nil // reported as not found by the caller
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			return errors.New("goes through a symbolic link in the build context")
		}
	}
	return nil
}
