package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/paddockhq/paddock/client"
)

// Stack is a Paddock to measure: a server reached over HTTP, whether it
// runs in this process (embedded) or elsewhere.
type Stack struct {
	Client *client.Client
	// Embedded: the server runs in this process (its RSS is this
	// process's, bench client included).
	Embedded bool
	// Pool is the warm pool's size; -1 when unknown (a server decides).
	Pool int
	// PID is the server's process on this host; 0 when unknown.
	PID int
	// Live lists the ids of the server's sandboxes that hold resources:
	// warm pool members (also those still starting) and sandboxes still
	// being torn down included. Nil when it cannot be observed (a server
	// elsewhere). The bench uses it only to wait — untimed — for the pool
	// to fill and for teardown to finish.
	Live func() ([]string, error)
	// CgroupVersion and LayerStore describe the embedded stack.
	CgroupVersion, LayerStore string
	// Notes say how the stack differs from what it stands for; they go
	// in the report's target.
	Notes []string
	// NoNetwork, if set, is why this stack's sandboxes get no network
	// (an embedded stack that must not disturb the host's): the network
	// scenarios report it as their reason.
	NoNetwork string
	// Close releases the stack (embedded: deletes every sandbox in it).
	Close func(context.Context) error
}

// Provider opens the Paddock under test.
type Provider interface {
	// Open returns a stack with a warm pool of pool sandboxes (embedded),
	// or the server, whose own pool setting then decides.
	Open(ctx context.Context, pool int) (*Stack, error)
}

// Options configure a run.
type Options struct {
	Provider Provider
	// Scenarios selects by name: a name selects itself and the scenarios
	// below it ("peer" selects "peer/bwrap", ...). Empty: all.
	Scenarios   []string
	Runs        int // iterations of each latency scenario (default 100)
	Concurrency int // parallel clients of the concurrent scenarios (default 4)
	Density     int // idle sandboxes of the density scenario (default 100)
	// WarmPool is the pool size of the embedded warm stack (default 2,
	// serve's default).
	WarmPool int
	// Runsc is the runsc binary ("" looks in PATH and ~/.cache/paddock/runsc).
	Runsc string
	// EgressURL is a destination the server's egress allows, for the
	// egress scenario.
	EgressURL string
	// Progress receives a progress bar (nil: none).
	Progress io.Writer
	Version  string // paddock's
	Log      *slog.Logger
}

// WarmPoolDefault is the embedded warm stack's pool size.
const WarmPoolDefault = 2

// Limits of the knobs: a run must stay bounded.
const (
	MaxRuns        = 100_000
	MaxConcurrency = 256
	MaxDensity     = 4000
)

func (o *Options) defaults() error {
	if o.Runs == 0 {
		o.Runs = 100
	}
	if o.Concurrency == 0 {
		o.Concurrency = 4
	}
	if o.Density == 0 {
		o.Density = 100
	}
	if o.WarmPool == 0 {
		o.WarmPool = WarmPoolDefault
	}
	switch {
	case o.Runs < 1 || o.Runs > MaxRuns:
		return fmt.Errorf("runs must be between 1 and %d", MaxRuns)
	case o.Concurrency < 1 || o.Concurrency > MaxConcurrency:
		return fmt.Errorf("concurrency must be between 1 and %d", MaxConcurrency)
	case o.Density < 1 || o.Density > MaxDensity:
		return fmt.Errorf("density must be between 1 and %d", MaxDensity)
	case o.WarmPool < 1 || o.WarmPool > 64:
		return errors.New("warm pool must be between 1 and 64")
	case o.Provider == nil:
		return errors.New("no Paddock to measure")
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return nil
}

// scenario is one named measurement.
type scenario struct {
	name, desc string
}

// Scenario names, in the order they run.
const (
	sFloor       = "floor/fork-exec"
	sOneShot     = "paddock/create-exec-delete"
	sBwrap       = "peer/bwrap"
	sBwrapDev    = "peer/bwrap/dev-proc"
	sRunc        = "peer/runc"
	sRunsc       = "peer/runsc"
	sNet         = "paddock/create-exec-delete/network"
	sExec        = "paddock/exec"
	sExecConc    = "paddock/exec/concurrent"
	sExecAcross  = "paddock/exec/across"
	sCreateConc  = "paddock/create/concurrent"
	sFilesUp     = "paddock/files/upload"
	sFilesDown   = "paddock/files/download"
	sEgress      = "paddock/egress"
	sMCP         = "paddock/mcp/exec"
	sBrowserNav  = "paddock/browser/navigate"
	sBrowserShot = "paddock/browser/screenshot"
	sDensity     = "paddock/density"
	sDensityExec = "paddock/density/exec"
	sDensityHC   = "paddock/density/health"
	sWarm        = "paddock/create-exec-delete/warm"
	sWarmClaim   = "paddock/create/warm-claim"
	sWarmNet     = "paddock/create-exec-delete/network/warm"
	sPause       = "paddock/pause"            // pause.go
	sResume      = "paddock/resume"           // pause.go
	sPausedCPU   = "paddock/paused/cpu"       // pause.go
	sCodeREST    = "paddock/code/rest"        // code.go
	sCodeE2B     = "paddock/code/e2b"         // code.go
	sCodeFirst   = "paddock/code/first-cell"  // code.go
	sCodeIdle    = "paddock/code/idle-memory" // code.go
)

var scenarios = []scenario{
	{sFloor, "plain fork/exec of /bin/true from the bench process (the floor)"},
	{sOneShot, "create → exec /bin/true → delete, network none, cold (no warm pool)"},
	{sBwrap, "bwrap --unshare-all --die-with-parent --ro-bind / / /bin/true"},
	{sBwrapDev, "bwrap as above plus --dev /dev --proc /proc --tmpfs /tmp (a usable one-shot)"},
	{sRunc, "runc run of a prepared bundle (host /usr read-only, user namespace) running /bin/true"},
	{sRunsc, "gVisor runsc run of the same bundle (network none)"},
	{sNet, "create → exec → delete with network allowlist (one allowed domain), cold"},
	{sExec, "exec /bin/true in an existing sandbox, one client"},
	{sExecConc, "exec /bin/true in one existing sandbox from C clients at once"},
	{sExecAcross, "exec /bin/true from C clients at once, spread over C sandboxes (audited execs per second)"},
	{sCreateConc, "creates from C parallel creators (sandboxes per second), then deleted"},
	{sFilesUp, "upload of a 16 MiB file through the files API"},
	{sFilesDown, "download of a 16 MiB file through the files API"},
	{sEgress, "HTTP GET through the egress proxy from inside a sandbox (curl)"},
	{sMCP, "exec /bin/true through the MCP exec tool (streamable HTTP), next to REST exec"},
	{sBrowserNav, "first navigation of a new sandbox's browser (Chromium's launch included), to a data: URL"},
	{sBrowserShot, "screenshot (PNG) of the loaded page"},
	{sDensity, "N idle sandboxes created by C creators: time to reach N, memory per sandbox"},
	{sDensityExec, "exec /bin/true in random sandboxes while N are alive"},
	{sDensityHC, "GET /healthz while N sandboxes are alive"},
	{sWarm, "create → exec → delete claiming from a full warm pool (refill waited for, untimed)"},
	{sWarmClaim, "the create call alone of the warm scenario (the claim)"},
	{sWarmNet, "create → exec → delete with network allowlist claiming from a full warm pool (the network attached at the claim)"},
	{sPause, "POST pause of a running sandbox (cgroup freeze, recorded)"},
	{sResume, "POST resume of that paused sandbox (cgroup thaw, recorded)"},
	{sPausedCPU, "CPU a paused sandbox (running a busy loop when paused) uses over 10 s (the sample), memory before and at the end"},
	{sCodeREST, "1+1 on a warm Python context through REST (POST /code, the NDJSON stream read to its end)"},
	{sCodeE2B, "1+1 on the same warm context through E2B's code-interpreter protocol (POST /execute, port 49999)"},
	{sCodeFirst, "create → first Python cell (the kernel's start included) of a new sandbox; the delete is not timed"},
	{sCodeIdle, "memory a sandbox gains with one idle Python context (its cgroup, before the first cell and 2 s after it)"},
}

func init() { scenarios = append(scenarios, snapshotScenarios...) } // snapshot.go

// Names lists the scenarios in run order.
func Names() []string {
	out := make([]string, len(scenarios))
	for i, s := range scenarios {
		out[i] = s.name
	}
	return out
}

// Select returns the scenario names that sel picks, in run order: each
// entry picks the scenario of that name and those below it. An entry
// that picks nothing is an error naming the valid ones.
func Select(sel []string) ([]string, error) {
	if len(sel) == 0 {
		return Names(), nil
	}
	picked := map[string]bool{}
	for _, raw := range sel {
		s := strings.Trim(strings.TrimSpace(raw), "/")
		n := 0
		for _, sc := range scenarios {
			if s != "" && (sc.name == s || strings.HasPrefix(sc.name, s+"/")) {
				picked[sc.name] = true
				n++
			}
		}
		if n == 0 {
			return nil, fmt.Errorf("no scenario %q; scenarios: %s", clip(raw, 64), strings.Join(Names(), ", "))
		}
	}
	var out []string
	for _, sc := range scenarios {
		if picked[sc.name] {
			out = append(out, sc.name)
		}
	}
	return out, nil
}

// clip shortens s to at most n bytes (on a rune boundary) for messages.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// Describe is what scenario name measures ("" for an unknown name).
func Describe(name string) string { return describe(name) }

func describe(name string) string {
	for _, s := range scenarios {
		if s.name == name {
			return s.desc
		}
	}
	return ""
}

// runner is one run's state.
type runner struct {
	o       Options
	runID   string
	sel     map[string]bool
	prog    *progress
	track   *tracker
	results map[string]Result
	caps    *capabilities // of the cold stack's server
	net     netProbe
	// firstSeen is when waitPool first saw each warm pool member.
	firstSeen map[string]time.Time
}

// Run measures the selected scenarios and returns the report. Every
// sandbox it made is deleted before it returns, also when ctx is
// cancelled (the report then holds what was measured, and the error says
// it was interrupted).
func Run(ctx context.Context, o Options) (*Report, error) {
	if err := o.defaults(); err != nil {
		return nil, err
	}
	names, err := Select(o.Scenarios)
	if err != nil {
		return nil, err
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	r := &runner{o: o, runID: hex.EncodeToString(b[:]), sel: map[string]bool{}, prog: newProgress(o.Progress),
		track: newTracker(), results: map[string]Result{}, firstSeen: map[string]time.Time{}}
	for _, n := range names {
		r.sel[n] = true
	}
	// Peers are ratios to Paddock's one-shot: measure it whenever one is.
	for _, p := range []string{sFloor, sBwrap, sBwrapDev, sRunc, sRunsc, sNet} {
		if r.sel[p] {
			r.sel[sOneShot] = true
		}
	}
	rep := &Report{Machine: CollectMachine(o.Version), Started: time.Now().UTC(),
		Settings: Settings{Runs: o.Runs, Concurrency: o.Concurrency, Density: o.Density, Selected: o.Scenarios}}
	start := time.Now()
	runErr := r.phases(ctx, rep)
	rep.Machine.LoadEnd = LoadAvg()
	rep.Seconds = round3(time.Since(start).Seconds())
	r.prog.clear()
	for _, sc := range scenarios {
		if res, ok := r.results[sc.name]; ok && r.sel[sc.name] {
			rep.Scenarios = append(rep.Scenarios, res)
		}
	}
	r.ratios(rep)
	if ctx.Err() != nil {
		return rep, fmt.Errorf("interrupted: %w", ctx.Err())
	}
	return rep, runErr
}

// phases runs the cold phase (a stack without warm pool) and then the
// warm phase (a stack with one).
func (r *runner) phases(ctx context.Context, rep *Report) error {
	needCold := false
	for n := range r.sel {
		if !isWarm(n) {
			needCold = true
		}
	}
	var errsSeen []error
	if needCold {
		if err := r.withStack(ctx, 0, rep, r.coldPhase); err != nil {
			errsSeen = append(errsSeen, err)
		}
	}
	if (r.sel[sWarm] || r.sel[sWarmClaim] || r.sel[sWarmNet]) && ctx.Err() == nil {
		if err := r.withStack(ctx, r.o.WarmPool, rep, r.warmPhase); err != nil {
			errsSeen = append(errsSeen, err)
		}
	}
	return errors.Join(errsSeen...)
}

func (r *runner) withStack(ctx context.Context, pool int, rep *Report, phase func(context.Context, *Stack)) error {
	st, err := r.o.Provider.Open(ctx, pool)
	if err != nil {
		r.failAll(pool, err)
		return fmt.Errorf("open the Paddock under test: %w", err)
	}
	defer func() {
		// Cleanup must run even when ctx is cancelled (Ctrl-C).
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Minute)
		defer cancel()
		r.cleanup(cctx, st)
		if st.Close != nil {
			if err := st.Close(cctx); err != nil {
				r.o.Log.Warn("closing the stack", "err", err)
			}
		}
	}()
	if pool == 0 || rep.Target.Mode == "" {
		r.describeTarget(ctx, st, rep, pool)
	}
	phase(ctx, st)
	return nil
}

func (r *runner) describeTarget(ctx context.Context, st *Stack, rep *Report, pool int) {
	rep.Target.Mode = "server"
	rep.Target.URL = st.Client.BaseURL()
	rep.Target.Pool = "decided by the server's --pool setting (cold scenarios may be served from it; see from_pool notes)"
	if st.Embedded {
		rep.Target.Mode = "embedded"
		rep.Target.URL = ""
		rep.Target.Pool = fmt.Sprintf("cold scenarios: none (pool %d); warm scenarios: a separate stack with pool %d", pool, r.o.WarmPool)
	}
	if st.CgroupVersion != "" {
		rep.Machine.CgroupVersion = st.CgroupVersion
	}
	if st.LayerStore != "" {
		rep.Machine.LayerStore = st.LayerStore
	}
	if v, err := healthVersion(ctx, st.Client); err == nil {
		rep.Target.ServerVersion = v
	}
	notes := st.Notes
	if st.NoNetwork != "" {
		notes = append(slices.Clip(notes), st.NoNetwork)
	}
	for _, n := range notes {
		if !slices.Contains(rep.Target.Notes, n) {
			rep.Target.Notes = append(rep.Target.Notes, n)
		}
	}
}

// isWarm reports whether scenario n runs on the stack with a warm pool.
func isWarm(n string) bool { return n == sWarm || n == sWarmClaim || n == sWarmNet }

// failAll records every selected scenario of the phase as failed.
func (r *runner) failAll(pool int, err error) {
	for n := range r.sel {
		warm := isWarm(n)
		if _, done := r.results[n]; !done && (warm == (pool > 0)) {
			r.set(r.result(n).without(StatusFailed, "could not open the Paddock under test: "+err.Error()))
		}
	}
}

func (r *runner) result(name string) Result {
	return Result{Name: name, Description: describe(name)}
}

func (r *runner) set(res Result) {
	r.results[res.Name] = res
}

// interrupted records a scenario cut short by ctx.
func (r *runner) interrupted(ctx context.Context, name string) bool {
	if ctx.Err() == nil {
		return false
	}
	if _, ok := r.results[name]; !ok {
		r.set(r.result(name).without(StatusFailed, "interrupted"))
	}
	return true
}

// ratios sets each peer's and the floor's ratio to Paddock's one-shot.
func (r *runner) ratios(rep *Report) {
	base, ok := r.results[sOneShot]
	if !ok || base.P50ms == nil || *base.P50ms == 0 {
		return
	}
	for i := range rep.Scenarios {
		s := &rep.Scenarios[i]
		if !strings.HasPrefix(s.Name, "peer/") && s.Name != sFloor {
			continue
		}
		if s.P50ms != nil {
			v := round3(*s.P50ms / *base.P50ms)
			s.RatioToPaddock = &v
		}
	}
}

// tracker remembers every sandbox the bench created, so that cleanup can
// delete what a scenario left (an error, Ctrl-C), and which ids were the
// bench's (any other live id on an embedded stack is a warm pool member).
type tracker struct {
	mu   sync.Mutex
	live map[string]bool
	seen map[string]bool
}

func newTracker() *tracker { return &tracker{live: map[string]bool{}, seen: map[string]bool{}} }

func (t *tracker) add(id string) {
	t.mu.Lock()
	t.live[id], t.seen[id] = true, true
	t.mu.Unlock()
}

func (t *tracker) done(id string) {
	t.mu.Lock()
	delete(t.live, id)
	t.mu.Unlock()
}

func (t *tracker) liveIDs() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]string, 0, len(t.live))
	for id := range t.live {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

func (t *tracker) wasSeen(id string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.seen[id]
}

// benchTimeout is the life of every bench sandbox: a bench killed with
// SIGKILL leaves nothing behind for long.
const benchTimeout = 30 * 60

const benchLabel = "paddock-bench"

func (r *runner) spec() client.Spec {
	return client.Spec{TimeoutS: benchTimeout, Labels: map[string]string{benchLabel: r.runID}}
}

// create makes a sandbox and tracks it.
func (r *runner) create(ctx context.Context, st *Stack, spec client.Spec) (client.Sandbox, error) {
	sb, err := st.Client.Create(ctx, spec)
	if err != nil {
		return sb, err
	}
	r.track.add(sb.ID)
	return sb, nil
}

// remove deletes a tracked sandbox.
func (r *runner) remove(ctx context.Context, st *Stack, id string) error {
	err := st.Client.Delete(ctx, id)
	if err == nil || client.IsNotFound(err) {
		r.track.done(id)
		return nil
	}
	return err
}

// cleanup deletes every sandbox of this run still alive: the tracked ones
// and any labelled with the run id — a create whose answer was lost to a
// Ctrl-C may still be finishing on the server, so the listing is repeated
// until it has come back empty for a while — then waits for teardown.
func (r *runner) cleanup(ctx context.Context, st *Stack) {
	ids := r.track.liveIDs()
	for _, id := range ids {
		if err := r.remove(ctx, st, id); err != nil {
			r.o.Log.Warn("cannot delete a bench sandbox", "sandbox", id, "err", err)
		}
	}
	quietSince := time.Now()
	for pass := 0; pass < 50 && ctx.Err() == nil; pass++ {
		list, err := st.Client.List(ctx, map[string]string{benchLabel: r.runID})
		if err != nil {
			r.o.Log.Warn("cannot list the bench's sandboxes", "err", err)
			break
		}
		if len(list) > 0 {
			quietSince = time.Now()
		} else if time.Since(quietSince) >= 300*time.Millisecond {
			break
		}
		for _, sb := range list {
			r.track.add(sb.ID)
			if err := r.remove(ctx, st, sb.ID); err != nil {
				r.o.Log.Warn("cannot delete a bench sandbox", "sandbox", sb.ID, "err", err)
			}
		}
		sleep(ctx, 50*time.Millisecond)
	}
	r.settle(ctx, st)
}

// settle waits (untimed, bounded) until no sandbox the bench deleted is
// still being torn down, so that one scenario's teardown does not run
// during the next one's measurement. Only possible where Live is known.
func (r *runner) settle(ctx context.Context, st *Stack) {
	if st.Live == nil {
		return
	}
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		ids, err := st.Live()
		if err != nil {
			return
		}
		busy := false
		for _, id := range ids {
			if r.track.wasSeen(id) && !r.isLive(id) {
				busy = true
				break
			}
		}
		if !busy {
			return
		}
		sleep(ctx, 5*time.Millisecond)
	}
}

func (r *runner) isLive(id string) bool {
	r.track.mu.Lock()
	defer r.track.mu.Unlock()
	return r.track.live[id]
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
