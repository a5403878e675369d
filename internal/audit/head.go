package audit

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
)

// Head is the signed note of the last durable record, rewritten after
// every fsync of the log. It is what makes truncation of the tail (after
// the last checkpoint) detectable: a log that ends before the head's
// record has lost records. It is written after the log's fsync, so it
// never runs ahead of the durable log; after a power loss it may lag.
type Head struct {
	V       int    `json:"v"`
	Seq     uint64 `json:"seq"`
	Hash    string `json:"hash"`
	Time    string `json:"time"`
	Segment string `json:"segment"`
	Signer  string `json:"signer"`
	Sig     string `json:"sig"`
}

// headSize is the fixed size of the head file: it is rewritten in place
// with one pwrite, never through a rename (which would need two more
// fsyncs per flush to be safe).
const headSize = 512

func signHead(priv ed25519.PrivateKey, seq uint64, hash, tm, segment string) Head {
	sig := ed25519.Sign(priv, headMessage(seq, hash, tm))
	return Head{V: 1, Seq: seq, Hash: hash, Time: tm, Segment: segment,
		Signer: Fingerprint(priv.Public().(ed25519.PublicKey)), Sig: base64.StdEncoding.EncodeToString(sig)}
}

func (h Head) encode() ([]byte, error) {
	b, err := json.Marshal(h)
	if err != nil {
		return nil, err
	}
	if len(b)+1 > headSize {
		return nil, fmt.Errorf("head of %d bytes does not fit %d", len(b), headSize)
	}
	out := bytes.Repeat([]byte{' '}, headSize)
	copy(out, b)
	out[headSize-1] = '\n'
	return out, nil
}

// ErrNoHead means the audit directory has no head file.
var ErrNoHead = errors.New("no head file")

// ReadHead reads and checks dir's head against pub.
func ReadHead(path string, pub ed25519.PublicKey) (Head, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return Head{}, ErrNoHead
	}
	if err != nil {
		return Head{}, fmt.Errorf("read head: %w", err)
	}
	if len(b) > headSize {
		return Head{}, fmt.Errorf("head file is %d bytes, over %d", len(b), headSize)
	}
	var h Head
	dec := json.NewDecoder(bytes.NewReader(bytes.TrimRight(b, " \n\x00")))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&h); err != nil {
		return Head{}, fmt.Errorf("head file is not valid: %w", err)
	}
	if h.V != 1 || !isHex64(h.Hash) || h.Seq == 0 {
		return Head{}, errors.New("head file is not valid")
	}
	sig, err := base64.StdEncoding.DecodeString(h.Sig)
	if err != nil || !ed25519.Verify(pub, headMessage(h.Seq, h.Hash, h.Time), sig) {
		return Head{}, fmt.Errorf("head signature does not verify with key %s", Fingerprint(pub))
	}
	return h, nil
}
