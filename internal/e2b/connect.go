package e2b

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/paddockhq/paddock/internal/errs"
)

// The Connect protocol (JSON codec) as the e2b SDK's connect-web client
// speaks it: unary calls are a JSON body answered by a JSON body (errors:
// an HTTP status and {"code","message"}); server streams are envelopes.

// Envelope flags.
const (
	flagCompressed = 0x01
	flagEndStream  = 0x02
)

// maxMessageBytes bounds one request message (a SendInput carries input
// bytes, base64'd): a length prefix of 4 GiB must not make the server
// allocate 4 GiB (memory exhaustion).
const maxMessageBytes = 16 << 20

const (
	ctUnaryJSON  = "application/json"
	ctStreamJSON = "application/connect+json"
)

// envelope is one framed message of a Connect stream.
type envelope struct {
	Flags byte
	Data  []byte
}

var errShortEnvelope = errors.New("truncated envelope")

// readEnvelope reads one envelope of at most max payload bytes. io.EOF
// means there was none (a clean end); a partial one is errShortEnvelope.
func readEnvelope(r io.Reader, max int) (envelope, error) {
	var hdr [5]byte
	if n, err := io.ReadFull(r, hdr[:]); err != nil {
		if err == io.EOF && n == 0 {
			return envelope{}, io.EOF
		}
		if err == io.ErrUnexpectedEOF {
			return envelope{}, errShortEnvelope
		}
		return envelope{}, err
	}
	size := binary.BigEndian.Uint32(hdr[1:])
	if uint64(size) > uint64(max) {
		return envelope{}, fmt.Errorf("message of %d bytes exceeds the limit of %d", size, max)
	}
	data := make([]byte, size)
	if _, err := io.ReadFull(r, data); err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return envelope{}, errShortEnvelope
		}
		return envelope{}, err
	}
	return envelope{Flags: hdr[0], Data: data}, nil
}

// appendEnvelope frames msg.
func appendEnvelope(dst []byte, flags byte, msg []byte) []byte {
	dst = append(dst, flags)
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(msg)))
	return append(dst, msg...)
}

// Connect error codes.
const (
	ccCanceled           = "canceled"
	ccUnknown            = "unknown"
	ccInvalidArgument    = "invalid_argument"
	ccDeadlineExceeded   = "deadline_exceeded"
	ccNotFound           = "not_found"
	ccAlreadyExists      = "already_exists"
	ccPermissionDenied   = "permission_denied"
	ccResourceExhausted  = "resource_exhausted"
	ccFailedPrecondition = "failed_precondition"
	ccUnimplemented      = "unimplemented"
	ccInternal           = "internal"
	ccUnavailable        = "unavailable"
	ccDataLoss           = "data_loss"
	ccUnauthenticated    = "unauthenticated"
)

// rpcError is an error with an explicit Connect code (for the few codes
// Paddock's errs cannot say, such as already_exists).
type rpcError struct {
	code string
	msg  string
}

func (e *rpcError) Error() string { return e.msg }

func rpcErr(code, format string, args ...any) error {
	return &rpcError{code: code, msg: fmt.Sprintf(format, args...)}
}

// connectCode maps an error to its Connect code and public message.
func connectCode(err error) (code, msg string) {
	var re *rpcError
	if errors.As(err, &re) {
		return re.code, re.msg
	}
	msg = errs.Public(err)
	switch errs.CodeOf(err) {
	case errs.CodeInvalid, errs.CodeCommandNotFound:
		return ccInvalidArgument, msg
	case errs.CodeUnauthenticated:
		return ccUnauthenticated, msg
	case errs.CodeForbidden:
		return ccPermissionDenied, msg
	case errs.CodeNotFound:
		return ccNotFound, msg
	case errs.CodeConflict:
		return ccFailedPrecondition, msg
	case errs.CodeTooLarge, errs.CodeLimit, errs.CodeRateLimited:
		return ccResourceExhausted, msg
	case errs.CodeUnsupported, errs.CodeMethodNotAllowed:
		return ccUnimplemented, msg
	case errs.CodeUnavailable, errs.CodeSandboxNotActive:
		return ccUnavailable, msg
	case errs.CodeTimeout:
		return ccDeadlineExceeded, msg
	}
	return ccInternal, msg
}

// connectStatus is the HTTP status of a unary error (the Connect
// protocol's table).
func connectStatus(code string) int {
	switch code {
	case ccCanceled:
		return 499
	case ccInvalidArgument, ccFailedPrecondition:
		return http.StatusBadRequest
	case ccDeadlineExceeded:
		return http.StatusGatewayTimeout
	case ccNotFound:
		return http.StatusNotFound
	case ccAlreadyExists:
		return http.StatusConflict
	case ccPermissionDenied:
		return http.StatusForbidden
	case ccResourceExhausted:
		return http.StatusTooManyRequests
	case ccUnimplemented:
		return http.StatusNotImplemented
	case ccUnavailable:
		return http.StatusServiceUnavailable
	case ccUnauthenticated:
		return http.StatusUnauthorized
	}
	return http.StatusInternalServerError
}

type wireError struct {
	Code    string `json:"code"`
	Message string `json:"message,omitempty"`
}

// writeUnaryError answers a unary call with err.
func writeUnaryError(w http.ResponseWriter, err error) {
	code, msg := connectCode(err)
	w.Header().Set("Content-Type", ctUnaryJSON)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(connectStatus(code))
	_ = json.NewEncoder(w).Encode(wireError{Code: code, Message: msg})
}

// writeUnary answers a unary call with v.
func writeUnary(w http.ResponseWriter, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		writeUnaryError(w, errs.Wrap(errs.CodeInternal, err, "cannot encode the answer"))
		return
	}
	w.Header().Set("Content-Type", ctUnaryJSON)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}

// mediaType is the lower-case media type of a Content-Type header.
func mediaType(h string) string {
	mt, _, err := mime.ParseMediaType(h)
	if err != nil {
		return ""
	}
	return strings.ToLower(mt)
}

// checkEncoding refuses compressed requests: the SDK never compresses, and
// a decompressor in front of the size check is a decompression bomb
// waiting to happen.
func checkEncoding(r *http.Request, header string) error {
	switch strings.ToLower(strings.TrimSpace(r.Header.Get(header))) {
	case "", "identity":
		return nil
	}
	return rpcErr(ccUnimplemented, "compressed requests are not supported (%s: %s)", header, clipText(r.Header.Get(header)))
}

// readUnary decodes the body of a unary call into v.
func readUnary(r *http.Request, v any) error {
	if mt := mediaType(r.Header.Get("Content-Type")); mt != ctUnaryJSON {
		return rpcErr(ccInvalidArgument, "unary calls take %s (got %q); only Connect's JSON codec is served", ctUnaryJSON, clipText(r.Header.Get("Content-Type")))
	}
	if err := checkEncoding(r, "Content-Encoding"); err != nil {
		return err
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxMessageBytes+1))
	if err != nil {
		return rpcErr(ccInvalidArgument, "cannot read the request: %v", errs.Public(err))
	}
	if len(body) > maxMessageBytes {
		return rpcErr(ccResourceExhausted, "request message over %d bytes", maxMessageBytes)
	}
	return decodeMessage(body, v)
}

// readStreamRequest decodes the one request message of a server stream.
func readStreamRequest(r *http.Request, v any) error {
	if mt := mediaType(r.Header.Get("Content-Type")); mt != ctStreamJSON {
		return rpcErr(ccInvalidArgument, "streaming calls take %s (got %q); only Connect's JSON codec is served", ctStreamJSON, clipText(r.Header.Get("Content-Type")))
	}
	if err := checkEncoding(r, "Connect-Content-Encoding"); err != nil {
		return err
	}
	env, err := readEnvelope(r.Body, maxMessageBytes)
	if err != nil {
		if err == io.EOF {
			return rpcErr(ccInvalidArgument, "the request has no message")
		}
		return rpcErr(ccInvalidArgument, "malformed request envelope: %v", err)
	}
	if env.Flags&flagCompressed != 0 {
		return rpcErr(ccUnimplemented, "compressed messages are not supported")
	}
	if env.Flags != 0 {
		return rpcErr(ccInvalidArgument, "unexpected envelope flags %#x", env.Flags)
	}
	// A server stream has exactly one request message.
	if _, err := readEnvelope(r.Body, 0); err != io.EOF {
		return rpcErr(ccInvalidArgument, "a server-streaming call takes one request message")
	}
	return decodeMessage(env.Data, v)
}

// decodeMessage reads one JSON message strictly: an unknown field is an
// error naming it (a misspelt option must not silently do nothing).
func decodeMessage(b []byte, v any) error {
	if len(bytes.TrimSpace(b)) == 0 {
		b = []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return rpcErr(ccInvalidArgument, "malformed request message: %s", jsonProblem(err))
	}
	if dec.More() {
		return rpcErr(ccInvalidArgument, "malformed request message: trailing data")
	}
	return nil
}

// jsonProblem describes a JSON decoding error without echoing input.
func jsonProblem(err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "truncated JSON"
	case errors.As(err, &se):
		return fmt.Sprintf("syntax error at byte %d", se.Offset)
	case errors.As(err, &te):
		return fmt.Sprintf("field %q has the wrong type", clipText(te.Field))
	}
	msg := err.Error()
	if f, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		return "unknown field " + clipText(f)
	}
	var pe *protoValueError
	if errors.As(err, &pe) {
		return pe.msg
	}
	return "not a valid message"
}

// stream writes the envelopes of one server-streaming answer. Its methods
// may be called from several goroutines (output and keepalives).
type stream struct {
	mu      sync.Mutex
	w       http.ResponseWriter
	rc      *http.ResponseController
	started bool
	ended   bool
	err     error // the first write error: the client is gone
}

// cut drops the connection under a started stream, without its end: what
// a client of envd sees when the sandbox's VM goes away mid-call. E2B's
// SDK answers that by probing /health (502 here once the sandbox is gone)
// and reports "the sandbox was killed or reached its end of life" — an
// error frame would read as a timeout instead. The gate's deferred audit
// result still runs; net/http swallows ErrAbortHandler.
func (s *stream) cut() {
	s.mu.Lock()
	_ = s.rc.Flush()
	s.mu.Unlock()
	panic(http.ErrAbortHandler)
}

func newStream(w http.ResponseWriter) *stream {
	return &stream{w: w, rc: http.NewResponseController(w)}
}

func (s *stream) start() {
	if !s.started {
		s.started = true
		h := s.w.Header()
		h.Set("Content-Type", ctStreamJSON)
		h.Set("X-Content-Type-Options", "nosniff")
		s.w.WriteHeader(http.StatusOK)
	}
}

// send writes one message.
func (s *stream) send(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return errs.Wrap(errs.CodeInternal, err, "cannot encode a message")
	}
	return s.write(0, b)
}

func (s *stream) write(flags byte, msg []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	if s.ended {
		return errors.New("stream already ended")
	}
	s.start()
	if flags&flagEndStream != 0 {
		s.ended = true // nothing may follow, keepalives included
	}
	if _, err := s.w.Write(appendEnvelope(make([]byte, 0, 5+len(msg)), flags, msg)); err != nil {
		s.err = err
		return err
	}
	if err := s.rc.Flush(); err != nil {
		s.err = err
		return err
	}
	return nil
}

type endStream struct {
	Error *wireError `json:"error,omitempty"`
}

// end writes the end-of-stream envelope: success, or err.
func (s *stream) end(err error) {
	var es endStream
	if err != nil {
		code, msg := connectCode(err)
		es.Error = &wireError{Code: code, Message: msg}
	}
	b, _ := json.Marshal(es)
	_ = s.write(flagEndStream, b)
}

// keepalives sends msg every interval until the returned stop is called;
// stop returns once the sender is gone, so that nothing writes to the
// response after its handler returned.
func (s *stream) keepalives(interval time.Duration, msg any) (stop func()) {
	if interval <= 0 {
		return func() {}
	}
	quit := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				if s.send(msg) != nil {
					return
				}
			}
		}
	}()
	return func() {
		close(quit)
		<-done
	}
}

// Keepalive-Ping-Interval (seconds) bounds.
const (
	defaultKeepalive = 50 * time.Second
	maxKeepalive     = time.Hour
)

// parseKeepalive reads the Keepalive-Ping-Interval header (seconds).
func parseKeepalive(h string) time.Duration {
	n, ok := parseDecimal(h, 7)
	if !ok || n == 0 {
		return defaultKeepalive
	}
	d := time.Duration(n) * time.Second
	if d > maxKeepalive {
		d = maxKeepalive
	}
	return d
}

// parseTimeoutMs reads Connect-Timeout-Ms: 0 when absent; an error when
// malformed (the protocol allows at most 10 digits).
func parseTimeoutMs(h string) (time.Duration, error) {
	if h == "" {
		return 0, nil
	}
	n, ok := parseDecimal(h, 10)
	if !ok {
		return 0, rpcErr(ccInvalidArgument, "malformed Connect-Timeout-Ms %q", clipText(h))
	}
	return time.Duration(n) * time.Millisecond, nil
}

// parseDecimal reads 1..maxDigits ASCII digits.
func parseDecimal(s string, maxDigits int) (uint64, bool) {
	s = strings.TrimSpace(s)
	if s == "" || len(s) > maxDigits {
		return 0, false
	}
	var n uint64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	return n, true
}

// Protobuf JSON scalars that a generic decoder gets wrong.

// protoValueError is a malformed protobuf JSON value.
type protoValueError struct{ msg string }

func (e *protoValueError) Error() string { return e.msg }

// u32 is a protobuf uint32: a JSON number or a decimal string.
type u32 uint32

func (u *u32) UnmarshalJSON(b []byte) error {
	s := string(bytes.TrimSpace(b))
	if s == "null" {
		*u = 0
		return nil
	}
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		s = s[1 : len(s)-1]
	}
	n, ok := parseDecimal(s, 10)
	if !ok || n > 1<<32-1 {
		return &protoValueError{msg: "a uint32 field is out of range or malformed"}
	}
	*u = u32(n)
	return nil
}

// pbBytes is a protobuf bytes field: standard or URL-safe base64, padded
// or not (protobuf JSON accepts all four).
type pbBytes []byte

func (p pbBytes) MarshalJSON() ([]byte, error) {
	return json.Marshal([]byte(p))
}

func (p *pbBytes) UnmarshalJSON(b []byte) error {
	var s string
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		*p = nil
		return nil
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return &protoValueError{msg: "a bytes field is not a base64 string"}
	}
	s = strings.TrimRight(s, "=")
	enc := base64.RawStdEncoding
	if strings.ContainsAny(s, "-_") {
		enc = base64.RawURLEncoding
	}
	out, err := enc.DecodeString(s)
	if err != nil {
		return &protoValueError{msg: "a bytes field is not valid base64"}
	}
	*p = out
	return nil
}

// pbTime formats a protobuf Timestamp: RFC 3339 in UTC with 0, 3, 6 or 9
// fractional digits.
func pbTime(t time.Time) string {
	t = t.UTC()
	ns := t.Nanosecond()
	switch {
	case ns == 0:
		return t.Format("2006-01-02T15:04:05Z")
	case ns%1e6 == 0:
		return t.Format("2006-01-02T15:04:05.000Z")
	case ns%1e3 == 0:
		return t.Format("2006-01-02T15:04:05.000000Z")
	}
	return t.Format("2006-01-02T15:04:05.000000000Z")
}

// clipText makes caller input safe to quote in a message.
func clipText(s string) string {
	if len(s) > 64 {
		s = s[:64] + "…"
	}
	return strings.ToValidUTF8(s, "?")
}
