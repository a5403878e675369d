package dockerfile

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/moby/buildkit/frontend/dockerfile/instructions"
	"github.com/moby/buildkit/frontend/dockerfile/parser"
	"github.com/moby/buildkit/frontend/dockerfile/shell"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/layers"
)

// MaxBuildArgs bounds --build-arg.
const MaxBuildArgs = 256

// Options configure a Builder.
type Options struct {
	Store           *layers.Store
	Bases           BaseResolver
	Runner          Runner  // nil: RUN is refused
	Fetcher         Fetcher // nil: ADD of a URL is refused
	CacheDir        string  // the step cache index
	TmpDir          string  // staging for RUN uppers and COPY trees
	Limits          layers.Limits
	MaxCacheEntries int
}

// Builder runs Dockerfile builds. It is safe for concurrent use.
type Builder struct {
	o     Options
	cache *cache
}

// New returns a Builder.
func New(o Options) (*Builder, error) {
	if o.Store == nil || o.CacheDir == "" || o.TmpDir == "" {
		return nil, errs.New(errs.CodeInternal, "dockerfile builder: store, cache and tmp directories are required")
	}
	if err := os.MkdirAll(o.TmpDir, 0o700); err != nil {
		return nil, errs.Wrap(errs.CodeInternal, err, "dockerfile builder: cannot create its staging directory")
	}
	c, err := openCache(o.CacheDir, o.Store, o.MaxCacheEntries)
	if err != nil {
		return nil, errs.Wrap(errs.CodeInternal, err, "dockerfile builder: cannot open its cache")
	}
	return &Builder{o: o, cache: c}, nil
}

// Request is one build.
type Request struct {
	Dockerfile []byte
	Context    string // directory holding the build context ("" for none)
	BuildArgs  map[string]string
	Target     string   // stage to build; default the last
	Network    string   // RUN network: "none" (default) or "allowlist"
	Allow      []string // hosts for "allowlist"
	NoCache    bool
	Log        func(Event)
	// Bases, if set, resolves this build's FROM instead of Options.Bases
	// (the template service's per-tenant view).
	Bases BaseResolver
}

// Result is a finished build. Its layers are held by Lease until the
// caller (having installed them as a template) releases it.
type Result struct {
	Layers           []layers.Layer // bottom first
	Config           *v1.ConfigFile
	DockerfileDigest string
	Lease            *layers.Lease
}

// StepError is the cause of a failed RUN.
type StepError struct {
	Step        int
	Line        int
	Instruction string
	ExitCode    int
	OutputTail  string
}

func (e *StepError) Error() string {
	return fmt.Sprintf("step %d (line %d) %s exited with code %d", e.Step, e.Line, e.Instruction, e.ExitCode)
}

type stage struct {
	name     string
	layers   []layers.Layer
	cfg      v1.ConfigFile
	key      string
	shell    []string
	args     map[string]string
	argOrder []string
	cmdSet   bool
}

func (s *stage) view() view {
	v := make(view, len(s.layers))
	for i, l := range s.layers {
		v[len(s.layers)-1-i] = l.Dir
	}
	return v
}

type build struct {
	b       *Builder
	req     Request
	f       *File
	lease   *layers.Lease
	stages  map[string]*stage // by lower-case name and by index
	step    int
	steps   int
	lex     *shell.Lex
	metaEnv map[string]string
}

// Build runs req. On error (a failed or cancelled step included) nothing
// is installed and no partial layer remains: the lease is released and
// staging directories are removed; layers of completed steps stay in the
// step cache.
func (b *Builder) Build(ctx context.Context, req Request) (*Result, error) {
	if len(req.BuildArgs) > MaxBuildArgs {
		return nil, errs.Invalid("at most %d build arguments", MaxBuildArgs)
	}
	switch req.Network {
	case "":
		req.Network = "none"
	case "none", "allowlist":
	default:
		return nil, errs.Invalid("build network must be none or allowlist")
	}
	f, err := Parse(req.Dockerfile)
	if err != nil {
		return nil, err
	}
	bd := &build{b: b, req: req, f: f, lease: b.o.Store.NewLease(), stages: map[string]*stage{}, lex: shell.NewLex(f.Escape)}
	for _, w := range f.Warnings {
		bd.log(Event{Message: "warning: " + w})
	}
	res, err := bd.run(ctx)
	if err != nil {
		bd.lease.Release()
		return nil, err
	}
	res.DockerfileDigest = f.Digest
	res.Lease = bd.lease
	return res, nil
}

func (bd *build) log(e Event) {
	if bd.req.Log != nil {
		bd.req.Log(e)
	}
}

func (bd *build) run(ctx context.Context) (*Result, error) {
	bd.metaEnv = map[string]string{}
	for _, a := range bd.f.MetaArgs {
		for _, kv := range a.Args {
			v := kv.ValueString()
			if ov, ok := bd.req.BuildArgs[kv.Key]; ok {
				v = ov
			}
			bd.metaEnv[kv.Key] = v
		}
	}
	target := len(bd.f.Stages) - 1
	if bd.req.Target != "" {
		target = -1
		for i, s := range bd.f.Stages {
			if strings.EqualFold(s.Name, bd.req.Target) {
				target = i
			}
		}
		if target < 0 {
			return nil, errs.NotFound("no stage named %q in the Dockerfile", bd.req.Target)
		}
	}
	for i := 0; i <= target; i++ {
		bd.steps += 1 + len(bd.f.Stages[i].Commands)
	}
	var last *stage
	for i := 0; i <= target; i++ {
		s, err := bd.runStage(ctx, i, &bd.f.Stages[i])
		if err != nil {
			return nil, err
		}
		bd.stages[strconv.Itoa(i)] = s
		if s.name != "" {
			bd.stages[strings.ToLower(s.name)] = s
		}
		last = s
	}
	cfg := last.cfg
	cfg.RootFS = v1.RootFS{Type: "layers"}
	for _, l := range last.layers {
		h, _ := v1.NewHash(l.DiffID)
		cfg.RootFS.DiffIDs = append(cfg.RootFS.DiffIDs, h)
	}
	cfg.OS, cfg.Architecture = "linux", runtime.GOARCH
	cfg.Created = v1.Time{Time: time.Now().UTC().Truncate(time.Second)}
	return &Result{Layers: last.layers, Config: &cfg}, nil
}

func (bd *build) runStage(ctx context.Context, idx int, st *instructions.Stage) (*stage, error) {
	bd.step++
	line := lineOf(st.Location)
	base, err := bd.lex.ProcessWordWithMatches(st.BaseName, envMap(bd.metaEnv))
	if err != nil {
		return nil, bd.stepErr(line, fmt.Errorf("FROM: %v", err))
	}
	name := base.Result
	if st.Platform != "" {
		return nil, bd.stepErr(line, errors.New("FROM --platform is not supported: images are pulled for the host's platform"))
	}
	bd.log(Event{Step: bd.step, Steps: bd.steps, Stage: st.Name, Instruction: st.SourceCode})
	s := &stage{name: st.Name, args: map[string]string{}}
	switch prev, isStage := bd.stages[strings.ToLower(name)]; {
	case strings.EqualFold(name, "scratch"):
		s.key = chain("", "scratch")
	case isStage:
		s.layers = append([]layers.Layer(nil), prev.layers...)
		s.cfg = *prev.cfg.DeepCopy()
		s.key = prev.key
		s.shell = prev.shell
	default:
		bases := bd.b.o.Bases
		if bd.req.Bases != nil {
			bases = bd.req.Bases
		}
		if bases == nil {
			return nil, bd.stepErr(line, errors.New("this builder cannot resolve base images"))
		}
		b, err := bases.Resolve(ctx, name, bd.lease)
		if err != nil {
			return nil, bd.wrapStep(line, err)
		}
		s.layers = b.Layers
		s.cfg = *b.Config.DeepCopy()
		s.cfg.History = nil
		s.key = chain("", "base:"+b.ID)
	}
	if len(s.shell) == 0 {
		s.shell = []string{"/bin/sh", "-c"}
	}
	s.cfg.RootFS = v1.RootFS{}
	for _, c := range st.Commands {
		if err := ctx.Err(); err != nil {
			return nil, errs.Wrap(errs.CodeUnavailable, err, "the build was cancelled")
		}
		bd.step++
		if err := bd.command(ctx, s, c); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// env is what ${VAR} sees in a stage: its ENV, then its ARGs.
func (s *stage) env() envMap {
	m := envMap{}
	for _, kv := range s.cfg.Config.Env {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	for k, v := range s.args {
		if _, ok := m[k]; !ok {
			m[k] = v
		}
	}
	return m
}

// runEnv is the environment of a RUN: ENV plus ARGs not shadowed.
func (s *stage) runEnv() []string {
	env := append([]string(nil), s.cfg.Config.Env...)
	have := map[string]bool{}
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		have[k] = true
	}
	for _, k := range s.argOrder {
		if !have[k] {
			env = append(env, k+"="+s.args[k])
		}
	}
	return env
}

type envMap map[string]string

func (e envMap) Get(k string) (string, bool) { v, ok := e[k]; return v, ok }
func (e envMap) Keys() []string {
	out := make([]string, 0, len(e))
	for k := range e {
		out = append(out, k)
	}
	return out
}

func (bd *build) expander(s *stage) instructions.SingleWordExpander {
	env := s.env()
	return func(word string) (string, error) {
		r, err := bd.lex.ProcessWordWithMatches(word, env)
		return r.Result, err
	}
}

type parserRange = parser.Range

func lineOf(loc []parserRange) int {
	if len(loc) == 0 {
		return 0
	}
	return loc[0].Start.Line
}

func (bd *build) stepErr(line int, err error) error {
	return errs.Wrap(errs.CodeInvalid, err, "step %d/%d (line %d): %s", bd.step, bd.steps, line, firstLine(err.Error()))
}

func (bd *build) wrapStep(line int, err error) error {
	var e *errs.Error
	if errors.As(err, &e) {
		return &errs.Error{Code: e.Code, Msg: fmt.Sprintf("step %d/%d (line %d): %s", bd.step, bd.steps, line, e.Msg), Cause: err}
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return errs.Wrap(errs.CodeUnavailable, err, "the build was cancelled at step %d/%d", bd.step, bd.steps)
	}
	return errs.Wrap(errs.CodeInternal, err, "step %d/%d (line %d) failed", bd.step, bd.steps, line)
}

func (s *stage) setEnv(k, v string) {
	for i, kv := range s.cfg.Config.Env {
		if kk, _, _ := strings.Cut(kv, "="); kk == k {
			s.cfg.Config.Env[i] = k + "=" + v
			return
		}
	}
	s.cfg.Config.Env = append(s.cfg.Config.Env, k+"="+v)
}

func (s *stage) history(c instructions.Command, empty bool) {
	s.cfg.History = append(s.cfg.History, v1.History{
		Created: v1.Time{Time: time.Now().UTC().Truncate(time.Second)}, CreatedBy: fmt.Sprint(c), EmptyLayer: empty,
	})
}
