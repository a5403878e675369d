package guestapi

// Background processes and interactive terminals.
//
// The guest keeps a registry of processes started with RouteProcStart.
// Each keeps its output in a bounded ring buffer per stream (stdout and
// stderr, or one "pty" stream for a terminal), addressed by byte offsets
// that count from the process's first byte, so a reader that fell behind or
// re-attaches knows exactly what it lost. RouteProcOutput streams it as
// frames: a FramePosition per stream first (and again after every gap),
// then data frames, then one FrameEnd carrying the ProcessInfo.
//
// An interactive session is RouteProcAttach with "Connection: Upgrade" and
// "Upgrade: paddock-attach/1": after the 101 answer the connection carries
// frames both ways — the same output frames from the guest, FrameStdin and
// FrameControl (JSON Control) from the host. Closing the connection
// detaches; it does not stop the process.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/paddockhq/paddock/internal/errs"
)

// AttachProtocol is the Upgrade token of an attach connection.
const AttachProtocol = "paddock-attach/1"

// Stream names.
const (
	StreamStdout = "stdout"
	StreamStderr = "stderr"
	StreamPTY    = "pty"
)

// Process states.
const (
	ProcRunning = "running"
	ProcExited  = "exited"
)

// Limits of the process registry, enforced by the guest.
const (
	DefaultProcessBuffer = 1 << 20  // bytes kept per stream
	MinProcessBuffer     = 4 << 10  //
	MaxProcessBuffer     = 16 << 20 //
	MaxLiveProcesses     = 64       // running background processes per sandbox
	MaxKeptExited        = 64       // exited ones kept for their output and exit status
	KeepExitedFor        = time.Hour
	// ProcessBufferBudget bounds the buffer capacity of all kept processes
	// together: the agent's memory counts against the sandbox's own limit.
	ProcessBufferBudget = 128 << 20
	MaxProcessReaders   = 256 // output streams and attachments open at once
	MaxTagBytes         = 128
	MaxTermSize         = 4096 // rows and columns
	// MaxProcessTimeout bounds a process's deadline.
	MaxProcessTimeout = 30 * 24 * time.Hour
)

// PTYSize is a terminal's size in character cells.
type PTYSize struct {
	Rows int `json:"rows"`
	Cols int `json:"cols"`
}

// Valid checks that both dimensions are in 1..MaxTermSize.
func (s PTYSize) Valid() error {
	if s.Rows < 1 || s.Rows > MaxTermSize || s.Cols < 1 || s.Cols > MaxTermSize {
		return errs.Invalid("terminal size must be 1..%d rows and columns", MaxTermSize)
	}
	return nil
}

// ProcessStartRequest asks the guest to start a background process.
type ProcessStartRequest struct {
	// Argv is run directly. Empty with PTY set: the user's login shell.
	Argv []string          `json:"argv"`
	Env  map[string]string `json:"env,omitempty"`
	Cwd  string            `json:"cwd,omitempty"`
	User string            `json:"user,omitempty"`
	// Tag names the process; unique among running processes.
	Tag string `json:"tag,omitempty"`
	// PTY runs the process on a new terminal of this size.
	PTY *PTYSize `json:"pty,omitempty"`
	// Stdin keeps a pipe to the process's standard input open (otherwise
	// it reads /dev/null). A terminal always has input.
	Stdin bool `json:"stdin,omitempty"`
	// BufferBytes is the ring buffer per stream (0: DefaultProcessBuffer).
	BufferBytes int64 `json:"buffer_bytes,omitempty"`
	// TimeoutMs is the process's deadline, from its start (0: none): the
	// guest kills its whole tree when it passes, whoever is connected (the
	// deadline outlives the server that set it). See SetProcessDeadline.
	TimeoutMs int64 `json:"timeout_ms,omitempty"`
}

// StreamInfo describes one output stream's buffer.
type StreamInfo struct {
	Written int64 `json:"written"` // bytes the process wrote (the next offset)
	Dropped int64 `json:"dropped"` // bytes overwritten: the oldest offset still kept
	Buffer  int64 `json:"buffer_bytes"`
}

// ProcessInfo describes a background process.
type ProcessInfo struct {
	ID        string                `json:"id"` // unique in the sandbox, unlike a pid
	Pid       int                   `json:"pid"`
	Tag       string                `json:"tag,omitempty"`
	Argv      []string              `json:"cmd"`
	Env       map[string]string     `json:"env,omitempty"`
	Cwd       string                `json:"cwd"`
	User      string                `json:"user"`
	PTY       *PTYSize              `json:"pty,omitempty"`
	Stdin     bool                  `json:"stdin"` // input is open
	State     string                `json:"state"`
	ExitCode  *int                  `json:"exit_code,omitempty"`
	Signal    string                `json:"signal,omitempty"`
	OOMKilled bool                  `json:"oom_killed,omitempty"`
	StartedAt time.Time             `json:"started_at"`
	EndedAt   *time.Time            `json:"ended_at,omitempty"`
	Streams   map[string]StreamInfo `json:"streams"`
	// Deadline is when the guest kills the process (set while it runs);
	// TimedOut says it did.
	Deadline *time.Time `json:"deadline,omitempty"`
	TimedOut bool       `json:"timed_out,omitempty"`
}

// Position is where a stream continues: Offset is the offset of the next
// data byte, Dropped how many bytes just before it were lost (overwritten
// in the ring buffer before this reader got them).
type Position struct {
	Stream  string `json:"stream"`
	Offset  int64  `json:"offset"`
	Dropped int64  `json:"dropped,omitempty"`
}

// SignalRequest is the body of POST /v1/processes/{ref}/signal.
type SignalRequest struct {
	Signal string `json:"signal"`
	Tree   bool   `json:"tree,omitempty"` // every process the process started, too
}

// SignalResult says how many processes were signalled.
type SignalResult struct {
	Signalled int `json:"signalled"`
}

// StdinResult says how many bytes reached the process.
type StdinResult struct {
	Bytes int64 `json:"bytes"`
}

// Control is a control message of an attach connection (and of the
// terminal WebSocket): {"type":"resize","rows":R,"cols":C},
// {"type":"eof"} (close input) or {"type":"signal","signal":"SIGINT"}.
type Control struct {
	Type   string `json:"type"`
	Rows   int    `json:"rows,omitempty"`
	Cols   int    `json:"cols,omitempty"`
	Signal string `json:"signal,omitempty"`
	Tree   bool   `json:"tree,omitempty"`
}

// Control types.
const (
	ControlResize = "resize"
	ControlEOF    = "eof"
	ControlSignal = "signal"
)

// maxControl bounds a control message.
const maxControl = 4 << 10

// ParseControl decodes and validates one control message.
func ParseControl(b []byte) (Control, error) {
	var c Control
	if len(b) > maxControl {
		return c, errs.Invalid("control message over %d bytes", maxControl)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return Control{}, errs.Invalid("malformed control message")
	}
	if dec.More() {
		return Control{}, errs.Invalid("malformed control message: trailing data")
	}
	switch c.Type {
	case ControlResize:
		if err := (PTYSize{Rows: c.Rows, Cols: c.Cols}).Valid(); err != nil {
			return Control{}, err
		}
	case ControlEOF:
	case ControlSignal:
		n, err := ParseSignal(c.Signal)
		if err != nil {
			return Control{}, err
		}
		c.Signal = SignalName(n)
	default:
		return Control{}, errs.Invalid("unknown control message type %q (want resize, eof or signal)", clipString(c.Type))
	}
	return c, nil
}

// Linux signal numbers (x86, arm: the architectures Paddock runs on).
var signalNums = map[string]int{
	"HUP": 1, "INT": 2, "QUIT": 3, "ILL": 4, "TRAP": 5, "ABRT": 6, "IOT": 6, "BUS": 7, "FPE": 8,
	"KILL": 9, "USR1": 10, "SEGV": 11, "USR2": 12, "PIPE": 13, "ALRM": 14, "TERM": 15,
	"STKFLT": 16, "CHLD": 17, "CONT": 18, "STOP": 19, "TSTP": 20, "TTIN": 21, "TTOU": 22,
	"URG": 23, "XCPU": 24, "XFSZ": 25, "VTALRM": 26, "PROF": 27, "WINCH": 28, "IO": 29,
	"POLL": 29, "PWR": 30, "SYS": 31,
}

var signalNames = func() map[int]string {
	m := make(map[int]string, len(signalNums))
	for n, v := range signalNums {
		if n == "IOT" || n == "POLL" {
			continue
		}
		m[v] = "SIG" + n
	}
	return m
}()

// Real-time signals as user space numbers them (glibc keeps 32 and 33).
const (
	sigRTMin = 34
	sigRTMax = 64
)

// ParseSignal reads a signal name ("SIGTERM", "term", "RTMIN+2") or number
// (1..64).
func ParseSignal(s string) (int, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	if t == "" {
		return 0, errs.Invalid("signal is empty")
	}
	if len(t) > 16 {
		return 0, errs.Invalid("unknown signal %q", clipString(s))
	}
	if allDigits(t) {
		n, _ := strconv.Atoi(t) // at most 16 digits: no overflow
		if n < 1 || n > sigRTMax {
			return 0, errs.Invalid("signal number must be 1..%d", sigRTMax)
		}
		return n, nil
	}
	t = strings.TrimPrefix(t, "SIG")
	if n, ok := signalNums[t]; ok {
		return n, nil
	}
	// "SIG32": how an unnamed signal is written back (SignalName).
	if t != "" && allDigits(t) {
		n, _ := strconv.Atoi(t)
		if n < 1 || n > sigRTMax {
			return 0, errs.Invalid("signal number must be 1..%d", sigRTMax)
		}
		return n, nil
	}
	base, off := 0, ""
	switch {
	case strings.HasPrefix(t, "RTMIN"):
		base, off = sigRTMin, strings.TrimPrefix(t, "RTMIN")
	case strings.HasPrefix(t, "RTMAX"):
		base, off = sigRTMax, strings.TrimPrefix(t, "RTMAX")
	default:
		return 0, errs.Invalid("unknown signal %q", clipString(s))
	}
	if off == "" {
		return base, nil
	}
	if len(off) < 2 || (off[0] != '+' && off[0] != '-') {
		return 0, errs.Invalid("unknown signal %q", clipString(s))
	}
	d, err := strconv.Atoi(off[1:])
	if err != nil || d < 0 || off[1] == '+' || off[1] == '-' {
		return 0, errs.Invalid("unknown signal %q", clipString(s))
	}
	if off[0] == '-' {
		d = -d
	}
	n := base + d
	if n < sigRTMin || n > sigRTMax {
		return 0, errs.Invalid("real-time signal out of range %d..%d", sigRTMin, sigRTMax)
	}
	return n, nil
}

// SignalName is the canonical name of signal n ("SIGTERM", "SIGRTMIN+3").
func SignalName(n int) string {
	if s, ok := signalNames[n]; ok {
		return s
	}
	if n >= sigRTMin && n <= sigRTMax {
		if n == sigRTMin {
			return "SIGRTMIN"
		}
		return "SIGRTMIN+" + strconv.Itoa(n-sigRTMin)
	}
	return "SIG" + strconv.Itoa(n)
}

// RefKind says how a process reference names a process.
type RefKind int

// Reference kinds.
const (
	RefPid RefKind = iota + 1 // "123": the newest process with that pid (a running one first)
	RefID                     // "p7": the registry id, never reused
	RefTag                    // "tag:NAME": the newest process with that tag
)

// Ref is a parsed process reference.
type Ref struct {
	Kind RefKind
	Pid  int
	ID   string
	Tag  string
}

// ParseRef reads a process reference: a pid, an id ("p" and digits) or
// "tag:" and a tag.
func ParseRef(s string) (Ref, error) {
	if tag, ok := strings.CutPrefix(s, "tag:"); ok {
		if err := ValidTag(tag); err != nil {
			return Ref{}, err
		}
		return Ref{Kind: RefTag, Tag: tag}, nil
	}
	if rest, ok := strings.CutPrefix(s, "p"); ok && allDigits(rest) && len(rest) <= 18 {
		return Ref{Kind: RefID, ID: s}, nil
	}
	if allDigits(s) && len(s) <= 10 {
		n, err := strconv.Atoi(s)
		if err == nil && n > 0 && n <= 1<<30 {
			return Ref{Kind: RefPid, Pid: n}, nil
		}
	}
	return Ref{}, errs.Invalid("process reference %q is not a pid, a process id (p7) or tag:NAME", clipString(s))
}

func (r Ref) String() string {
	switch r.Kind {
	case RefPid:
		return strconv.Itoa(r.Pid)
	case RefID:
		return r.ID
	case RefTag:
		return "tag:" + r.Tag
	}
	return ""
}

// ValidTag checks a process tag: 1..MaxTagBytes of valid UTF-8 without
// control characters or '/'.
func ValidTag(t string) error {
	if t == "" || len(t) > MaxTagBytes || !utf8.ValidString(t) {
		return errs.Invalid("a tag is 1..%d bytes of UTF-8", MaxTagBytes)
	}
	for _, r := range t {
		if r < 0x20 || r == 0x7f || r == '/' || (r >= 0x80 && r < 0xa0) {
			return errs.Invalid("a tag must not contain control characters or '/'")
		}
	}
	return nil
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// FromMode says where an output reader starts.
type FromMode int

// Start modes.
const (
	FromStart  FromMode = iota // the oldest byte still kept
	FromTail                   // only what is written from now on
	FromOffset                 // byte offsets
)

// From is where an output reader starts in each stream.
type From struct {
	Mode FromMode
	// Offset applies to every stream without an entry in PerStream.
	Offset    int64
	PerStream map[string]int64
}

// maxOffset keeps offsets far from overflow.
const maxOffset = 1 << 62

// ParseFrom reads "start" (or ""), "tail", an offset N applied to every
// stream, or per-stream offsets "stdout:N,stderr:M" (unnamed streams start
// at the oldest byte kept).
func ParseFrom(s string) (From, error) {
	switch s {
	case "", "start":
		return From{Mode: FromStart}, nil
	case "tail":
		return From{Mode: FromTail}, nil
	}
	if len(s) > 128 {
		return From{}, errs.Invalid("from is too long")
	}
	if allDigits(s) {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n > maxOffset {
			return From{}, errs.Invalid("from offset out of range")
		}
		return From{Mode: FromOffset, Offset: n}, nil
	}
	f := From{Mode: FromOffset, PerStream: map[string]int64{}}
	for _, part := range strings.Split(s, ",") {
		name, num, ok := strings.Cut(part, ":")
		if !ok || !validStream(name) || !allDigits(num) {
			return From{}, errs.Invalid("from must be start, tail, an offset or stream:offset,... (streams stdout, stderr, pty)")
		}
		if _, dup := f.PerStream[name]; dup {
			return From{}, errs.Invalid("from names stream %s twice", name)
		}
		n, err := strconv.ParseInt(num, 10, 64)
		if err != nil || n > maxOffset {
			return From{}, errs.Invalid("from offset out of range")
		}
		f.PerStream[name] = n
	}
	return f, nil
}

func validStream(s string) bool {
	return s == StreamStdout || s == StreamStderr || s == StreamPTY
}

// String is the query form ParseFrom reads.
func (f From) String() string {
	switch f.Mode {
	case FromTail:
		return "tail"
	case FromOffset:
		if len(f.PerStream) == 0 {
			return strconv.FormatInt(f.Offset, 10)
		}
		var parts []string
		for _, n := range []string{StreamStdout, StreamStderr, StreamPTY} {
			if v, ok := f.PerStream[n]; ok {
				parts = append(parts, n+":"+strconv.FormatInt(v, 10))
			}
		}
		return strings.Join(parts, ",")
	}
	return "start"
}

// OffsetFor is where stream starts under f, given the oldest and next
// offsets the stream has; dropped counts requested bytes already lost.
func (f From) OffsetFor(stream string, oldest, next int64) (off, dropped int64) {
	switch f.Mode {
	case FromTail:
		return next, 0
	case FromOffset:
		want, ok := f.PerStream[stream]
		if !ok {
			if len(f.PerStream) > 0 {
				return oldest, oldest
			}
			want = f.Offset
		}
		if want > next {
			return next, 0
		}
		if want < oldest {
			return oldest, oldest - want
		}
		return want, 0
	}
	return oldest, oldest
}

// OutputEvent is a piece of a process's output, or (Data empty) a position:
// the stream continues at Offset, and Dropped bytes just before it are lost.
// Every stream starts with a position.
type OutputEvent struct {
	Stream  string
	Offset  int64  // of Data[0] in Stream
	Data    []byte // valid only during the callback
	Dropped int64
}

// OutputOptions tune an output read.
type OutputOptions struct {
	From   From
	Follow bool // keep streaming until the process exits
}

// StartProcess starts a background process.
func (c *Client) StartProcess(ctx context.Context, req ProcessStartRequest) (ProcessInfo, error) {
	return ask[ProcessInfo](ctx, c, RouteProcStart, req, maxAnswerHead)
}

// ListProcesses lists running and kept exited processes, oldest first.
func (c *Client) ListProcesses(ctx context.Context) ([]ProcessInfo, error) {
	var out ProcList
	err := c.unaryMax(ctx, RouteProcList, nil, &out, maxLargeAnswerHead)
	return out.Processes, err
}

// Process describes one process.
func (c *Client) Process(ctx context.Context, ref string) (ProcessInfo, error) {
	return ask[ProcessInfo](ctx, c, RouteProcGet, ProcRequest{Ref: ref}, maxAnswerHead)
}

// SignalProcess sends a signal to a process (or its whole tree).
func (c *Client) SignalProcess(ctx context.Context, ref string, req SignalRequest) (SignalResult, error) {
	return ask[SignalResult](ctx, c, RouteProcSignal, ProcSignalRequest{Ref: ref, SignalRequest: req}, maxAnswerHead)
}

// CloseStdin closes a process's input (a terminal gets its EOF character).
func (c *Client) CloseStdin(ctx context.Context, ref string) error {
	return c.unary(ctx, RouteProcCloseStdin, ProcRequest{Ref: ref}, nil)
}

// ResizeProcess changes a terminal's size.
func (c *Client) ResizeProcess(ctx context.Context, ref string, size PTYSize) error {
	return c.unary(ctx, RouteProcResize, ProcResizeRequest{Ref: ref, PTYSize: size}, nil)
}

// WaitProcess blocks until the process exits or timeout passes, and
// returns its state either way.
func (c *Client) WaitProcess(ctx context.Context, ref string, timeout time.Duration) (ProcessInfo, error) {
	return ask[ProcessInfo](ctx, c, RouteProcWait, ProcWaitRequest{Ref: ref, TimeoutMs: timeout.Milliseconds()}, maxAnswerHead)
}

// KillProcess kills the process and everything it started, and returns its
// final state.
func (c *Client) KillProcess(ctx context.Context, ref string) (ProcessInfo, error) {
	return ask[ProcessInfo](ctx, c, RouteProcKill, ProcRequest{Ref: ref}, maxAnswerHead)
}

// SetProcessDeadline (re)sets a running process's deadline to timeout from
// now (0: none); the guest kills the process's tree when it passes.
func (c *Client) SetProcessDeadline(ctx context.Context, ref string, timeout time.Duration) (ProcessInfo, error) {
	return ask[ProcessInfo](ctx, c, RouteProcDeadline, ProcDeadlineRequest{Ref: ref, TimeoutMs: timeout.Milliseconds()}, maxAnswerHead)
}

// WriteStdin streams r to the process's input.
func (c *Client) WriteStdin(ctx context.Context, ref string, r io.Reader) (int64, error) {
	if r == nil {
		r = bytes.NewReader(nil)
	}
	a, err := c.call(ctx, RouteProcStdin, ProcRequest{Ref: ref}, r, -1, false)
	if err != nil {
		return 0, err
	}
	defer a.close()
	var res StdinResult
	err = a.head(&res)
	return res.Bytes, err
}

// ProcessOutput reads a process's output, calling fn for each event, and
// returns the process's state at the end of the stream.
func (c *Client) ProcessOutput(ctx context.Context, ref string, opt OutputOptions, fn func(OutputEvent) error) (ProcessInfo, error) {
	a, err := c.call(ctx, RouteProcOutput, ProcOutputRequest{Ref: ref, From: opt.From.String(), Follow: opt.Follow}, nil, 0, false)
	if err != nil {
		return ProcessInfo{}, err
	}
	defer a.close()
	if err := a.head(nil); err != nil {
		return ProcessInfo{}, err
	}
	return receive(ctx, &a.fr, fn)
}

// receive reads a process stream up to its end frame.
func receive(ctx context.Context, fr *FrameReader, fn func(OutputEvent) error) (ProcessInfo, error) {
	offs := map[string]int64{}
	for {
		typ, p, err := fr.Next()
		if err != nil {
			return ProcessInfo{}, streamErr(ctx, "process stream", err)
		}
		switch typ {
		case FrameStdout, FrameStderr, FramePTY:
			s := frameStream(typ)
			off := offs[s]
			offs[s] = off + int64(len(p))
			if err := fn(OutputEvent{Stream: s, Offset: off, Data: p}); err != nil {
				return ProcessInfo{}, err
			}
		case FramePosition:
			var pos Position
			if err := json.Unmarshal(p, &pos); err != nil || !validStream(pos.Stream) {
				return ProcessInfo{}, errs.New(errs.CodeUnavailable, "sandbox agent sent a malformed position frame")
			}
			offs[pos.Stream] = pos.Offset
			if err := fn(OutputEvent{Stream: pos.Stream, Offset: pos.Offset, Dropped: pos.Dropped}); err != nil {
				return ProcessInfo{}, err
			}
		case FrameEnd:
			var info ProcessInfo
			if err := json.Unmarshal(p, &info); err != nil {
				return ProcessInfo{}, errs.Wrap(errs.CodeUnavailable, err, "sandbox agent sent a malformed end frame")
			}
			return info, nil
		case FrameError:
			return ProcessInfo{}, AsError(p)
		default:
			return ProcessInfo{}, errs.New(errs.CodeUnavailable, "sandbox agent sent an unknown frame")
		}
	}
}

func frameStream(typ byte) string {
	switch typ {
	case FrameStderr:
		return StreamStderr
	case FramePTY:
		return StreamPTY
	}
	return StreamStdout
}

// StreamFrame is the data frame type of stream.
func StreamFrame(stream string) byte {
	switch stream {
	case StreamStderr:
		return FrameStderr
	case StreamPTY:
		return FramePTY
	}
	return FrameStdout
}

// Attachment is an interactive connection to a process: output one way,
// input and control the other. Receive runs in one goroutine; Write and
// Control may be called from others.
type Attachment struct {
	conn io.ReadWriteCloser
	ctx  context.Context
	fr   *FrameReader
	fw   *FrameWriter
	stop func() bool
	once sync.Once
}

// AttachProcess opens an interactive connection to a process; output starts
// at from.
func (c *Client) AttachProcess(ctx context.Context, ref string, from From) (*Attachment, error) {
	conn, br, err := c.dialUpgrade(ctx, RouteProcAttach, AttachProtocol, ProcOutputRequest{Ref: ref, From: from.String()})
	if err != nil {
		return nil, err
	}
	a := &Attachment{conn: conn, ctx: ctx, fr: NewFrameReader(br), fw: NewFrameWriter(conn, 32<<10, nil)}
	a.stop = context.AfterFunc(ctx, func() { _ = a.Close() })
	return a, nil
}

// Receive calls fn for every output event until the process's stream ends
// (it exited and its output is drained) and returns its final state.
func (a *Attachment) Receive(fn func(OutputEvent) error) (ProcessInfo, error) {
	return receive(a.ctx, a.fr, fn)
}

// Write sends input to the process.
func (a *Attachment) Write(p []byte) error {
	if len(p) == 0 {
		return nil
	}
	if err := a.fw.Send(FrameStdin, p); err != nil {
		return unavailable(a.ctx, err)
	}
	return nil
}

// Control sends a control message (resize, eof, signal).
func (a *Attachment) Control(c Control) error {
	if err := a.fw.SendJSON(FrameControl, c); err != nil {
		return unavailable(a.ctx, err)
	}
	return nil
}

// Close detaches; the process keeps running.
func (a *Attachment) Close() error {
	var err error
	a.once.Do(func() {
		a.stop()
		err = a.conn.Close()
	})
	if errors.Is(err, io.ErrClosedPipe) || errors.Is(err, net.ErrClosed) {
		err = nil
	}
	return err
}

func clipString(s string) string {
	if len(s) > 32 {
		s = s[:32] + "…"
	}
	return strings.ToValidUTF8(s, "?")
}
