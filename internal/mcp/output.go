package mcp

import (
	"fmt"

	"github.com/paddockhq/paddock/internal/textcut"
)

// capture keeps a bounded view of a stream for a model: the first half of
// its budget and a ring of the last half, so that both how a command
// started and how it ended (usually the error) survive truncation. Memory
// stays within the budget plus one write, however long the stream.
type capture struct {
	headCap, tailCap int
	head, tail       []byte
	total            int64
}

func newCapture(limit int) *capture {
	if limit < 2 {
		limit = 2
	}
	h := limit / 2
	return &capture{headCap: h, tailCap: limit - h}
}

func (c *capture) Write(p []byte) (int, error) {
	n := len(p)
	c.total += int64(n)
	if room := c.headCap - len(c.head); room > 0 {
		k := min(room, len(p))
		c.head = append(c.head, p[:k]...)
		p = p[k:]
	}
	if len(p) == 0 {
		return n, nil
	}
	if len(p) >= c.tailCap {
		c.tail = append(c.tail[:0], p[len(p)-c.tailCap:]...)
		return n, nil
	}
	if over := len(c.tail) + len(p) - c.tailCap; over > 0 {
		c.tail = append(c.tail[:0], c.tail[over:]...)
	}
	c.tail = append(c.tail, p...)
	return n, nil
}

// truncated reports whether bytes were left out.
func (c *capture) truncated() bool {
	return c.total > int64(len(c.head)+len(c.tail))
}

// String is the kept text; a cut is marked in place with the counts, so a
// model knows what it is not seeing.
func (c *capture) String() string {
	if !c.truncated() {
		return textcut.Valid(string(c.head) + string(c.tail))
	}
	head := textcut.TrimPartialEnd(c.head)
	tail := textcut.TrimPartialStart(c.tail)
	omitted := c.total - int64(len(head)+len(tail))
	return textcut.Valid(string(head)) + truncationMarker(omitted, len(head), len(tail), c.total) + textcut.Valid(string(tail))
}

func truncationMarker(omitted int64, head, tail int, total int64) string {
	return fmt.Sprintf("\n[... %d bytes omitted: showing the first %d and the last %d of %d bytes ...]\n", omitted, head, tail, total)
}
