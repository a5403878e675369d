package guestapi

import "time"

// Routes of the guest protocol. Every route is POST with a head frame (the
// table in doc.go says what each carries); the host's client and the
// guest's server both name them through these constants.
const (
	RouteHealth  = "/v1/health"
	RouteExec    = "/v1/exec"
	RouteNetwork = "/v1/network"

	RouteFileRead    = "/v1/files/read"
	RouteFileLines   = "/v1/files/lines"
	RouteFileWrite   = "/v1/files/write"
	RouteFileStat    = "/v1/files/stat"
	RouteFileList    = "/v1/files/list"
	RouteFileMkdir   = "/v1/files/mkdir"
	RouteFileMove    = "/v1/files/move"
	RouteFileRemove  = "/v1/files/remove"
	RouteFileEdit    = "/v1/files/edit"
	RouteFileFind    = "/v1/files/find"
	RouteFileSearch  = "/v1/files/search"
	RouteFileArchive = "/v1/files/archive"
	RouteFileExtract = "/v1/files/extract"
	RouteFileWatch   = "/v1/files/watch"
	RouteFileMeta    = "/v1/files/metadata"

	RouteProcStart      = "/v1/processes/start"
	RouteProcList       = "/v1/processes/list"
	RouteProcGet        = "/v1/processes/get"
	RouteProcKill       = "/v1/processes/kill"
	RouteProcOutput     = "/v1/processes/output"
	RouteProcAttach     = "/v1/processes/attach"
	RouteProcStdin      = "/v1/processes/stdin"
	RouteProcCloseStdin = "/v1/processes/close-stdin"
	RouteProcSignal     = "/v1/processes/signal"
	RouteProcResize     = "/v1/processes/resize"
	RouteProcWait       = "/v1/processes/wait"
	RouteProcDeadline   = "/v1/processes/deadline"

	RouteBrowserStart    = "/v1/browser/start"
	RouteBrowserStatus   = "/v1/browser/status"
	RouteBrowserStop     = "/v1/browser/stop"
	RouteBrowserDevTools = "/v1/browser/devtools"
)

// Routes lists every route, in the order of the table in doc.go.
var Routes = []string{
	RouteHealth, RouteExec, RouteNetwork,
	RouteFileRead, RouteFileLines, RouteFileWrite, RouteFileStat, RouteFileList, RouteFileMkdir, RouteFileMove,
	RouteFileRemove, RouteFileEdit, RouteFileFind, RouteFileSearch, RouteFileArchive, RouteFileExtract,
	RouteFileWatch, RouteFileMeta,
	RouteProcStart, RouteProcList, RouteProcGet, RouteProcKill, RouteProcOutput, RouteProcAttach,
	RouteProcStdin, RouteProcCloseStdin, RouteProcSignal, RouteProcResize, RouteProcWait, RouteProcDeadline,
	RouteBrowserStart, RouteBrowserStatus, RouteBrowserStop, RouteBrowserDevTools,
}

// ContentType marks a body in this codec.
const ContentType = "application/x-paddock-frames"

// Empty is the head of a request or answer that carries nothing.
type Empty struct{}

// ExecStarted is the head of an exec's answer.
type ExecStarted struct {
	Pid int `json:"pid"`
}

// ReadInfo is the head of a read's answer: Length bytes follow, from
// Offset of a file of Size bytes (both -1 for a /proc or /sys file, whose
// size is known only at its end).
type ReadInfo struct {
	Size   int64     `json:"size"`
	Offset int64     `json:"offset"`
	Length int64     `json:"length"`
	Mode   string    `json:"mode"`
	MTime  time.Time `json:"mtime"`
}

// ListInfo is the head of a listing's answer; the listing follows as
// data frames (a ListResult in JSON), passed on without decoding.
type ListInfo struct {
	Entries   int  `json:"entries"`
	Truncated bool `json:"truncated"`
}

// ProcRequest names a process (see ParseRef).
type ProcRequest struct {
	Ref string `json:"ref"`
}

// ProcSignalRequest is the head of RouteProcSignal.
type ProcSignalRequest struct {
	Ref string `json:"ref"`
	SignalRequest
}

// ProcResizeRequest is the head of RouteProcResize.
type ProcResizeRequest struct {
	Ref string `json:"ref"`
	PTYSize
}

// ProcWaitRequest is the head of RouteProcWait.
type ProcWaitRequest struct {
	Ref       string `json:"ref"`
	TimeoutMs int64  `json:"timeout_ms"`
}

// ProcDeadlineRequest is the head of RouteProcDeadline: the deadline from
// now (0: none).
type ProcDeadlineRequest struct {
	Ref       string `json:"ref"`
	TimeoutMs int64  `json:"timeout_ms"`
}

// ProcOutputRequest is the head of RouteProcOutput and RouteProcAttach:
// where output starts (ParseFrom's syntax) and, for output, whether to
// follow it to the end.
type ProcOutputRequest struct {
	Ref    string `json:"ref"`
	From   string `json:"from,omitempty"`
	Follow bool   `json:"follow,omitempty"`
}

// ProcList is the answer of RouteProcList.
type ProcList struct {
	Processes []ProcessInfo `json:"processes"`
}

// DevToolsRequest is the head of RouteBrowserDevTools (instance 0:
// whichever runs).
type DevToolsRequest struct {
	Instance int `json:"instance,omitempty"`
}
