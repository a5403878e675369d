// Package guestapi is the protocol between the Paddock server and the guest
// agent that runs as PID 1 inside each sandbox, and the host-side client for
// it.
//
// Two channels connect them. The setup channel is a SOCK_SEQPACKET
// socketpair inherited by the guest as fd 3: the host sends one Config, the
// guest answers with one Ready once its root filesystem and hardening are in
// place. The service channel is HTTP/1.1 on a Unix socket whose listening fd
// (fd 4) the host created inside a root-only directory; the host dials its
// path, and nothing inside the sandbox can reach it (the path is outside the
// sandbox's root and the fd is close-on-exec in the guest).
//
// # One shape
//
// Every route is POST, and one codec (codec.go) carries all of them. A
// request's body is one head frame — the request as JSON — then, on the
// routes whose body column says so, raw bytes to the end of the body. An
// answer is frames: a frame is one type byte, a 4-byte big-endian length
// and the payload, so a gigabyte of output or file costs no encoding. A
// unary route answers one head frame (h). A stream answers a head frame,
// its data (d), output (o e t p) or event (v) frames, and an end frame (x)
// carrying its result. A failure is one error frame (E: {"code",
// "message"}, an internal/errs code) under the code's HTTP status, or —
// once a stream has begun — the stream's last frame. Two routes upgrade
// the connection (101) after their head: an attachment then carries frames
// both ways, a DevTools tunnel the relayed TCP bytes themselves.
//
// # Routes
//
// Bounds: a head is at most MaxHead bytes unless noted; data, output and
// event frames at most MaxFrame. Errors every route may answer are left
// out: invalid_argument (a malformed head or field), limit_exceeded (too
// many concurrent requests of the kind), internal.
//
//	route                     request head        body   answer frames                     errors
//	/v1/health                Empty               -      h Health                          -
//	/v1/exec                  ExecRequest (32MiB) stdin† h ExecStarted, o e…, x ExecResult command_not_found
//	/v1/network               NetworkConfig (4MiB) -     h Empty                           -
//	/v1/files/read            ReadRequest         -      h ReadInfo, d…, x Empty           not_found forbidden conflict, E(range_size) 416
//	/v1/files/lines           LinesRequest        -      h LinesResult                     not_found forbidden
//	/v1/files/write           WriteRequest        file   h FileInfo                        not_found forbidden too_large conflict
//	/v1/files/stat            StatRequest         -      h FileInfo                        not_found forbidden
//	/v1/files/list            ListRequest         -      h ListInfo, d… (ListResult), x    not_found forbidden
//	/v1/files/mkdir           MkdirRequest        -      h FileInfo                        not_found conflict forbidden
//	/v1/files/move            MoveRequest         -      h FileInfo                        not_found conflict forbidden
//	/v1/files/remove          RemoveRequest       -      h RemoveResult                    not_found conflict forbidden
//	/v1/files/edit            EditRequest (128MiB) -     h EditResult                      not_found conflict too_large
//	/v1/files/find            FindRequest         -      h FindResult                      not_found
//	/v1/files/search          SearchRequest       -      h SearchResult                    not_found
//	/v1/files/archive         ArchiveRequest      -      h Empty, d… (tar), x Empty        not_found forbidden
//	/v1/files/extract         ExtractRequest      tar    h ExtractResult                   too_large conflict
//	/v1/files/watch           WatchRequest        -      h Empty, v FileEvent…, x Empty    not_found limit_exceeded
//	/v1/files/metadata        MetadataRequest     -      h FileInfo                        not_found forbidden too_large unsupported
//	/v1/processes/start       ProcessStartRequest -      h ProcessInfo                     command_not_found conflict
//	/v1/processes/list        Empty               -      h ProcList                        -
//	/v1/processes/get         ProcRequest         -      h ProcessInfo                     not_found
//	/v1/processes/kill        ProcRequest         -      h ProcessInfo                     not_found
//	/v1/processes/output      ProcOutputRequest   -      h Empty, p o e t…, x ProcessInfo  not_found
//	/v1/processes/attach      ProcOutputRequest   -      101, then p o e t… x / i c‡       not_found
//	/v1/processes/stdin       ProcRequest         input  h StdinResult                     not_found conflict timeout
//	/v1/processes/close-stdin ProcRequest         -      h Empty                           not_found conflict
//	/v1/processes/signal      ProcSignalRequest   -      h SignalResult                    not_found conflict
//	/v1/processes/resize      ProcResizeRequest   -      h Empty                           not_found conflict
//	/v1/processes/wait        ProcWaitRequest     -      h ProcessInfo                     not_found
//	/v1/processes/deadline    ProcDeadlineRequest -      h ProcessInfo                     not_found conflict
//	/v1/browser/start         BrowserStartRequest -      h BrowserInfo                     unavailable timeout conflict
//	/v1/browser/status        Empty               -      h BrowserInfo                     -
//	/v1/browser/stop          Empty               -      h BrowserInfo                     -
//	/v1/browser/devtools      DevToolsRequest     -      101, then the TCP stream          conflict unavailable
//
// † with ExecRequest.StdinStream; otherwise stdin comes in the head.
// ‡ output frames from the guest, input (i) and control (c) frames from
// the host; closing the connection detaches.
package guestapi
