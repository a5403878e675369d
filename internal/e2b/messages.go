package e2b

import (
	"bytes"
	"encoding/json"
	"strings"
)

// The messages of envd's process.Process and filesystem.Filesystem
// services in protobuf's JSON mapping (lowerCamelCase names; int64 as
// strings; enums by name; bytes as base64), as the SDK's generated code
// reads and writes them.

// process.Process

type pbProcessConfig struct {
	Cmd  string            `json:"cmd"`
	Args []string          `json:"args,omitempty"`
	Envs map[string]string `json:"envs,omitempty"`
	Cwd  *string           `json:"cwd,omitempty"`
}

type pbPTYSize struct {
	Cols u32 `json:"cols"`
	Rows u32 `json:"rows"`
}

type pbPTY struct {
	Size *pbPTYSize `json:"size,omitempty"`
}

type pbStartRequest struct {
	Process *pbProcessConfig `json:"process"`
	PTY     *pbPTY           `json:"pty,omitempty"`
	Tag     *string          `json:"tag,omitempty"`
	Stdin   *bool            `json:"stdin,omitempty"`
}

type pbSelector struct {
	Pid *u32    `json:"pid,omitempty"`
	Tag *string `json:"tag,omitempty"`
}

type pbSelectorRequest struct {
	Process *pbSelector `json:"process"`
}

type pbUpdateRequest struct {
	Process *pbSelector `json:"process"`
	PTY     *pbPTY      `json:"pty,omitempty"`
}

type pbProcessInput struct {
	Stdin *pbBytes `json:"stdin,omitempty"`
	PTY   *pbBytes `json:"pty,omitempty"`
}

type pbSendInputRequest struct {
	Process *pbSelector     `json:"process"`
	Input   *pbProcessInput `json:"input"`
}

type pbSendSignalRequest struct {
	Process *pbSelector `json:"process"`
	Signal  pbSignal    `json:"signal"`
}

// pbSignal is the process.Signal enum: its name or its number.
type pbSignal int

const (
	sigUnspecified pbSignal = 0
	sigKill        pbSignal = 9
	sigTerm        pbSignal = 15
)

func (s *pbSignal) UnmarshalJSON(b []byte) error {
	v, err := enumValue(b, map[string]int{"SIGNAL_UNSPECIFIED": 0, "SIGNAL_SIGTERM": 15, "SIGNAL_SIGKILL": 9})
	if err != nil {
		return err
	}
	*s = pbSignal(v)
	return nil
}

// enumValue reads a protobuf enum given by name or number.
func enumValue(b []byte, names map[string]int) (int, error) {
	b = bytes.TrimSpace(b)
	if bytes.Equal(b, []byte("null")) {
		return 0, nil
	}
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return 0, &protoValueError{msg: "malformed enum value"}
		}
		if v, ok := names[s]; ok {
			return v, nil
		}
		return 0, &protoValueError{msg: "unknown enum value " + quoteText(s)}
	}
	n, ok := parseDecimal(string(b), 10)
	if !ok || n > 1<<31-1 {
		return 0, &protoValueError{msg: "malformed enum value"}
	}
	return int(n), nil
}

type pbProcessInfo struct {
	Config pbProcessConfig `json:"config"`
	Pid    uint32          `json:"pid"`
	Tag    *string         `json:"tag,omitempty"`
}

type pbListResponse struct {
	Processes []pbProcessInfo `json:"processes"`
}

type pbStartEvent struct {
	Pid uint32 `json:"pid"`
}

type pbDataEvent struct {
	Stdout pbBytes `json:"stdout,omitempty"`
	Stderr pbBytes `json:"stderr,omitempty"`
	PTY    pbBytes `json:"pty,omitempty"`
}

type pbEndEvent struct {
	ExitCode int32   `json:"exitCode"`
	Exited   bool    `json:"exited"`
	Status   string  `json:"status"`
	Error    *string `json:"error,omitempty"`
}

type pbProcessEvent struct {
	Start     *pbStartEvent `json:"start,omitempty"`
	Data      *pbDataEvent  `json:"data,omitempty"`
	End       *pbEndEvent   `json:"end,omitempty"`
	Keepalive *struct{}     `json:"keepalive,omitempty"`
}

// pbEventResponse is StartResponse and ConnectResponse.
type pbEventResponse struct {
	Event pbProcessEvent `json:"event"`
}

// filesystem.Filesystem

type pbPathRequest struct {
	Path string `json:"path"`
}

type pbMoveRequest struct {
	Source      string `json:"source"`
	Destination string `json:"destination"`
}

type pbListDirRequest struct {
	Path  string `json:"path"`
	Depth u32    `json:"depth"`
}

type pbWatchRequest struct {
	Path               string `json:"path"`
	Recursive          bool   `json:"recursive"`
	IncludeEntry       bool   `json:"includeEntry"`
	AllowNetworkMounts bool   `json:"allowNetworkMounts"`
}

type pbWatcherRequest struct {
	WatcherID string `json:"watcherId"`
}

// Enum names of filesystem.FileType and filesystem.EventType.
const (
	ftUnspecified = "FILE_TYPE_UNSPECIFIED"
	ftFile        = "FILE_TYPE_FILE"
	ftDirectory   = "FILE_TYPE_DIRECTORY"
	ftSymlink     = "FILE_TYPE_SYMLINK"

	evCreate = "EVENT_TYPE_CREATE"
	evWrite  = "EVENT_TYPE_WRITE"
	evRemove = "EVENT_TYPE_REMOVE"
	evRename = "EVENT_TYPE_RENAME"
)

type pbEntryInfo struct {
	Name          string            `json:"name"`
	Type          string            `json:"type"`
	Path          string            `json:"path"`
	Size          int64             `json:"size,string"`
	Mode          uint32            `json:"mode"`
	Permissions   string            `json:"permissions"`
	Owner         string            `json:"owner"`
	Group         string            `json:"group"`
	ModifiedTime  string            `json:"modifiedTime,omitempty"`
	SymlinkTarget *string           `json:"symlinkTarget,omitempty"`
	Metadata      map[string]string `json:"metadata,omitempty"`
}

type pbEntryResponse struct {
	Entry *pbEntryInfo `json:"entry"`
}

type pbListDirResponse struct {
	Entries []pbEntryInfo `json:"entries"`
}

type pbFilesystemEvent struct {
	Name  string       `json:"name"`
	Type  string       `json:"type"`
	Entry *pbEntryInfo `json:"entry,omitempty"`
}

// pbWatchResponse is WatchDirResponse: its oneof "event" is inline.
type pbWatchResponse struct {
	Start      *struct{}          `json:"start,omitempty"`
	Filesystem *pbFilesystemEvent `json:"filesystem,omitempty"`
	Keepalive  *struct{}          `json:"keepalive,omitempty"`
}

type pbCreateWatcherResponse struct {
	WatcherID string `json:"watcherId"`
}

type pbWatcherEventsResponse struct {
	Events []pbFilesystemEvent `json:"events"`
}

type empty struct{}

func quoteText(s string) string {
	b, _ := json.Marshal(clipText(s))
	return strings.TrimSpace(string(b))
}
