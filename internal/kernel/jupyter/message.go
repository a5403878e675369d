package jupyter

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"sync"
	"time"
)

// ProtocolVersion is the messaging protocol version Paddock speaks.
const ProtocolVersion = "5.3"

// delimiter separates routing identities from the signed message.
var delimiter = []byte("<IDS|MSG>")

// Limits on a decoded message (a kernel runs untrusted code, so every part
// of what it sends is bounded).
const (
	maxIdentities = 16
	maxBuffers    = 16
)

// Header is a message header (and a parent header).
type Header struct {
	MsgID    string `json:"msg_id"`
	Session  string `json:"session"`
	Username string `json:"username"`
	Date     string `json:"date"`
	MsgType  string `json:"msg_type"`
	Version  string `json:"version"`
}

// Message is one Jupyter message.
type Message struct {
	Identities [][]byte
	Header     Header
	Parent     Header
	Metadata   json.RawMessage
	Content    json.RawMessage
	Buffers    [][]byte
}

// Errors of Decode.
var (
	ErrNoDelimiter = errors.New("jupyter: no <IDS|MSG> delimiter")
	ErrBadSig      = errors.New("jupyter: bad message signature")
	ErrShort       = errors.New("jupyter: message has too few frames")
	ErrTooMany     = errors.New("jupyter: message has too many frames")
)

// Signer signs and verifies messages with HMAC-SHA256 over the header,
// parent header, metadata and content frames, as the connection file's
// key says. An empty key disables signing (never used by Paddock: a
// kernel with an unsigned channel accepts code from any local process).
type Signer struct {
	key  []byte
	pool sync.Pool
}

// NewSigner returns a signer for key.
func NewSigner(key []byte) *Signer {
	s := &Signer{key: append([]byte(nil), key...)}
	s.pool.New = func() any { return hmac.New(sha256.New, s.key) }
	return s
}

func (s *Signer) sign(parts ...[]byte) []byte {
	if len(s.key) == 0 {
		return nil
	}
	m := s.pool.Get().(hash.Hash)
	m.Reset()
	for _, p := range parts {
		m.Write(p)
	}
	sum := m.Sum(nil)
	s.pool.Put(m)
	out := make([]byte, hex.EncodedLen(len(sum)))
	hex.Encode(out, sum)
	return out
}

// Encode returns the frames of m, signed.
func (s *Signer) Encode(m Message) ([][]byte, error) {
	h, err := json.Marshal(m.Header)
	if err != nil {
		return nil, err
	}
	p := []byte("{}")
	if m.Parent.MsgID != "" {
		if p, err = json.Marshal(m.Parent); err != nil {
			return nil, err
		}
	}
	md := []byte(m.Metadata)
	if len(md) == 0 {
		md = []byte("{}")
	}
	c := []byte(m.Content)
	if len(c) == 0 {
		c = []byte("{}")
	}
	frames := make([][]byte, 0, len(m.Identities)+6+len(m.Buffers))
	frames = append(frames, m.Identities...)
	frames = append(frames, delimiter, s.sign(h, p, md, c), h, p, md, c)
	frames = append(frames, m.Buffers...)
	return frames, nil
}

// Decode parses and verifies the frames of one message. A message whose
// signature does not match is refused (ErrBadSig): only the kernel, which
// read the key from its connection file, can produce one.
func (s *Signer) Decode(frames [][]byte) (Message, error) {
	var m Message
	i := 0
	for ; i < len(frames); i++ {
		if bytes.Equal(frames[i], delimiter) {
			break
		}
	}
	if i == len(frames) {
		return m, ErrNoDelimiter
	}
	if i > maxIdentities {
		return m, ErrTooMany
	}
	rest := frames[i+1:]
	if len(rest) < 5 {
		return m, ErrShort
	}
	if len(rest)-5 > maxBuffers {
		return m, ErrTooMany
	}
	sig, h, p, md, c := rest[0], rest[1], rest[2], rest[3], rest[4]
	if len(s.key) > 0 {
		want := s.sign(h, p, md, c)
		if !hmac.Equal(want, sig) {
			return m, ErrBadSig
		}
	}
	if err := json.Unmarshal(h, &m.Header); err != nil {
		return m, fmt.Errorf("jupyter: header: %w", err)
	}
	if len(bytes.TrimSpace(p)) > 0 {
		if err := json.Unmarshal(p, &m.Parent); err != nil {
			return m, fmt.Errorf("jupyter: parent header: %w", err)
		}
	}
	if !json.Valid(md) {
		return m, errors.New("jupyter: metadata is not JSON")
	}
	if !json.Valid(c) {
		return m, errors.New("jupyter: content is not JSON")
	}
	m.Identities = frames[:i]
	m.Metadata = md
	m.Content = c
	m.Buffers = rest[5:]
	return m, nil
}

// NewID returns a random message or session id (a UUID v4 in text form,
// as Jupyter clients use).
func NewID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	var out [36]byte
	hex.Encode(out[0:8], b[0:4])
	out[8] = '-'
	hex.Encode(out[9:13], b[4:6])
	out[13] = '-'
	hex.Encode(out[14:18], b[6:8])
	out[18] = '-'
	hex.Encode(out[19:23], b[8:10])
	out[23] = '-'
	hex.Encode(out[24:], b[10:])
	return string(out[:])
}

// NewHeader returns a header for a new message of type t in session.
func NewHeader(session, t string) Header {
	return Header{
		MsgID:    NewID(),
		Session:  session,
		Username: "paddock",
		Date:     time.Now().UTC().Format("2006-01-02T15:04:05.000000Z"),
		MsgType:  t,
		Version:  ProtocolVersion,
	}
}
