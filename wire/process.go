package wire

import (
	"sort"
	"strconv"
	"strings"
	"time"
)

// Background processes and terminals (docs/processes.md). A process is
// named by a ref: its pid, its id ("p7") or "tag:NAME".

// ProcessRequest starts a background process (POST .../processes).
type ProcessRequest struct {
	// Cmd is run directly (no shell). Empty with PTY: the user's login shell.
	Cmd  []string          `json:"cmd"`
	Env  map[string]string `json:"env,omitempty"`
	Cwd  string            `json:"cwd,omitempty"`
	User string            `json:"user,omitempty"`
	// Tag names the process (unique among running ones); "tag:NAME" then
	// finds it where a pid is expected.
	Tag string `json:"tag,omitempty"`
	// PTY runs the process on a terminal of this size.
	PTY *PTYSize `json:"pty,omitempty"`
	// Stdin keeps the process's input open for writing (otherwise it
	// reads /dev/null). A terminal always has input.
	Stdin bool `json:"stdin,omitempty"`
	// BufferBytes is the output kept per stream (0: 1 MiB).
	BufferBytes int64 `json:"buffer_bytes,omitempty"`
	// TimeoutMs is the process's deadline from its start (0: none, at
	// most MaxProcessTimeoutMs): the sandbox kills its whole tree when it
	// passes, whoever is connected and whatever the server does meanwhile.
	TimeoutMs int64 `json:"timeout_ms,omitempty"`
}

// MaxProcessTimeoutMs bounds ProcessRequest.TimeoutMs (30 days).
const MaxProcessTimeoutMs = 30 * 24 * 3600 * 1000

// PTYSize is a terminal's size.
type PTYSize struct {
	Rows int `json:"rows"`
	Cols int `json:"cols"`
}

// Process states.
const (
	ProcRunning = "running"
	ProcExited  = "exited"
)

// Output streams of a process.
const (
	StreamStdout = "stdout"
	StreamStderr = "stderr"
	StreamPTY    = "pty" // a terminal's one stream
)

// StreamInfo is where a process's output stream stands.
type StreamInfo struct {
	Written int64 `json:"written"` // bytes the process wrote (the next offset)
	Dropped int64 `json:"dropped"` // bytes overwritten: the oldest offset still kept
	Buffer  int64 `json:"buffer_bytes"`
}

// ProcessInfo describes a process.
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
	State     string                `json:"state"` // ProcRunning or ProcExited
	ExitCode  *int                  `json:"exit_code,omitempty"`
	Signal    string                `json:"signal,omitempty"`
	OOMKilled bool                  `json:"oom_killed,omitempty"`
	StartedAt time.Time             `json:"started_at"`
	EndedAt   *time.Time            `json:"ended_at,omitempty"`
	Streams   map[string]StreamInfo `json:"streams"`
}

// ProcessList is GET .../processes.
type ProcessList struct {
	Processes []ProcessInfo `json:"processes"`
}

// SignalRequest signals a process (POST .../processes/{pid}/signal);
// Tree: every process it started too.
type SignalRequest struct {
	Signal string `json:"signal"` // a name ("SIGTERM", the default) or a number
	Tree   bool   `json:"tree"`
}

// SignalResult counts the processes signalled.
type SignalResult struct {
	Signalled int `json:"signalled"`
}

// WaitRequest waits for a process to exit (POST .../wait; nil: 30 s).
type WaitRequest struct {
	TimeoutMs *int64 `json:"timeout_ms"`
}

// StdinResult counts the bytes written to a process's input.
type StdinResult struct {
	Bytes int64 `json:"bytes"`
}

// OK is the answer of an action that returns nothing else.
type OK struct {
	OK bool `json:"ok"`
}

// Where an output read starts (the from parameter): the oldest byte kept,
// new output only, or offsets (FromOffsets).
const (
	FromStart = "start"
	FromTail  = "tail"
)

// FromOffsets is the from parameter that reads each named stream from its
// offset ("stdout:N,stderr:M"); streams it does not name start at their
// oldest byte kept. No offsets: FromStart.
func FromOffsets(offsets map[string]int64) string {
	if len(offsets) == 0 {
		return FromStart
	}
	names := make([]string, 0, len(offsets))
	for k := range offsets {
		names = append(names, k)
	}
	sort.Strings(names)
	parts := make([]string, 0, len(names))
	for _, k := range names {
		parts = append(parts, k+":"+strconv.FormatInt(offsets[k], 10))
	}
	return strings.Join(parts, ",")
}

// OutputOptions tune an output read.
type OutputOptions struct {
	// From is FromStart (""), FromTail, an offset for every stream, or
	// FromOffsets.
	From string
	// Follow keeps the stream open until the process exits.
	Follow bool
}

// OutputEvent is a piece of a process's output, or (Data empty) a
// position: the stream continues at Offset, and Dropped bytes just before
// it were lost (overwritten in the ring buffer). Every stream starts
// with a position.
type OutputEvent struct {
	Stream  string
	Offset  int64  // of Data[0] in Stream
	Data    []byte // valid only during the callback
	Dropped int64
}

// OutputLine is one line of the NDJSON output stream (GET .../output): a
// position (Data and DataB64 empty: the stream continues at Offset,
// Dropped bytes before it are lost), a chunk of output (Data when it is
// UTF-8, else DataB64), the final Process state, or an Error.
type OutputLine struct {
	Stream  string       `json:"stream,omitempty"`
	Offset  *int64       `json:"offset,omitempty"`
	Dropped int64        `json:"dropped,omitempty"`
	Data    string       `json:"data,omitempty"`
	DataB64 string       `json:"data_b64,omitempty"`
	Process *ProcessInfo `json:"process,omitempty"`
	Error   *ErrorDetail `json:"error,omitempty"`
}

// Control messages of the terminal WebSocket (client to server, text):
// {"type":"resize","rows":R,"cols":C}, {"type":"eof"} (close input),
// {"type":"signal","signal":"SIGINT"}.
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

// WSProtocol is the subprotocol of the interactive WebSockets. Browsers,
// which cannot set Authorization on a WebSocket, offer it together with
// "bearer.<key>"; the key itself is never echoed back.
const WSProtocol = "paddock.v1"

// Stream bytes of the exec WebSocket's binary server messages.
const (
	WSStdout byte = 1
	WSStderr byte = 2
)

// WSMessage is a text message on the interactive sockets: from the server
// started, dropped, exit or error; from the client, controls.
type WSMessage struct {
	Type    string `json:"type"` // started | dropped | exit | error
	Pid     int    `json:"pid,omitempty"`
	ID      string `json:"id,omitempty"`
	Bytes   int64  `json:"bytes,omitempty"`
	Code    string `json:"code,omitempty"`
	Message string `json:"message,omitempty"`
	// For exit: how the command ended (an exec also carries its
	// ExecResult fields).
	ExitCode  *int   `json:"exit_code,omitempty"`
	Signal    string `json:"signal,omitempty"`
	OOMKilled bool   `json:"oom_killed,omitempty"`
	TimedOut  bool   `json:"timed_out,omitempty"`
	// For a resize control from the client.
	Rows int `json:"rows,omitempty"`
	Cols int `json:"cols,omitempty"`
}
