package wire

// ExecRequest is one command to run (POST /v1/sandboxes/{id}/exec).
type ExecRequest struct {
	Cmd       []string          `json:"cmd"`
	Env       map[string]string `json:"env,omitempty"`
	Cwd       string            `json:"cwd,omitempty"`
	User      string            `json:"user,omitempty"`
	TimeoutMs int64             `json:"timeout_ms,omitempty"`
	Stdin     string            `json:"stdin,omitempty"`
	// MaxOutputBytes caps each of stdout and stderr (0: the server default).
	MaxOutputBytes int64 `json:"max_output_bytes,omitempty"`
}

// ExecResult is how a command ended.
type ExecResult struct {
	ExitCode        int     `json:"exit_code"`
	Signal          string  `json:"signal,omitempty"` // e.g. "SIGKILL" when killed by a signal
	OOMKilled       bool    `json:"oom_killed,omitempty"`
	TimedOut        bool    `json:"timed_out,omitempty"`
	DurationMs      float64 `json:"duration_ms"`
	StdoutBytes     int64   `json:"stdout_bytes"`
	StderrBytes     int64   `json:"stderr_bytes"`
	StdoutTruncated bool    `json:"stdout_truncated,omitempty"`
	StderrTruncated bool    `json:"stderr_truncated,omitempty"`
	Pid             int     `json:"pid,omitempty"`
}

// ExecResponse is the answer of a buffered exec.
type ExecResponse struct {
	ExecResult
	Stdout string `json:"stdout"`
	Stderr string `json:"stderr"`
}

// A streamed exec (Accept: application/x-ndjson) answers one JSON object
// a line: ExecOutput lines as output arrives, then an ErrorBody line if it
// failed after starting, or else the ExecResult. ExecLine reads any of
// them.

// ExecOutput is a chunk of a streamed exec's output: one of the two is set.
type ExecOutput struct {
	Stdout *string `json:"stdout,omitempty"`
	Stderr *string `json:"stderr,omitempty"`
}

// ExecLine is any line of a streamed exec: output, an error, or the
// result (ExitCode set: the last line).
type ExecLine struct {
	ExecOutput
	Error *ErrorDetail `json:"error,omitempty"`
	ExecResult
	ExitCode *int `json:"exit_code,omitempty"` // set on the result line only
}
