package process

// Ring keeps the last max bytes written to one output stream, addressed by
// absolute offsets (the number of bytes written before a byte). Memory is
// allocated as output arrives, so a quiet process costs nothing; it never
// exceeds max. Not safe for concurrent use: the owner locks.
type Ring struct {
	buf   []byte
	max   int
	start int64 // offset of the oldest byte kept
	end   int64 // offset of the next byte (bytes written so far)
}

// NewRing returns an empty ring of at most max bytes.
func NewRing(max int) *Ring { return &Ring{max: max} }

// Write appends p (see write).
func (r *Ring) Write(p []byte) { r.write(p) }

// ReadAt copies from offset off (see readAt).
func (r *Ring) ReadAt(off int64, dst []byte) int { return r.readAt(off, dst) }

// Oldest is the offset of the oldest byte kept; Next, of the next byte.
func (r *Ring) Oldest() int64 { return r.start }

// Next is the number of bytes written so far.
func (r *Ring) Next() int64 { return r.end }

// write appends p, overwriting the oldest bytes once the ring is full.
func (r *Ring) write(p []byte) {
	if len(p) == 0 {
		return
	}
	if r.max <= 0 {
		r.end += int64(len(p))
		r.start = r.end
		return
	}
	if len(p) > r.max {
		// Only the last max bytes can be kept.
		r.end += int64(len(p) - r.max)
		p = p[len(p)-r.max:]
	}
	r.grow(r.end + int64(len(p)))
	pos := int(r.end % int64(r.max))
	n := copy(r.buf[pos:], p)
	copy(r.buf, p[n:]) // wrap around (only when the buffer is full size)
	r.end += int64(len(p))
	if r.end-r.start > int64(r.max) {
		r.start = r.end - int64(r.max)
	}
}

// grow makes room for offsets below upTo while the buffer is smaller than
// max. While it grows nothing has wrapped yet (end <= len(buf) <= max), so
// offset o is at index o both before and after.
func (r *Ring) grow(upTo int64) {
	if len(r.buf) == r.max || upTo <= int64(len(r.buf)) {
		return
	}
	n := len(r.buf) * 2
	if n < 4096 {
		n = 4096
	}
	for int64(n) < upTo && n < r.max {
		n *= 2
	}
	if n > r.max || r.end >= int64(r.max) {
		n = r.max
	}
	nb := make([]byte, n)
	copy(nb, r.buf)
	r.buf = nb
}

// readAt copies bytes from offset off (start <= off <= end) into dst and
// returns how many.
func (r *Ring) readAt(off int64, dst []byte) int {
	if off < r.start || off >= r.end || len(dst) == 0 {
		return 0
	}
	n := r.end - off
	if n > int64(len(dst)) {
		n = int64(len(dst))
	}
	pos := int(off % int64(r.max))
	c := copy(dst[:n], r.buf[pos:])
	if int64(c) < n {
		copy(dst[c:n], r.buf)
	}
	return int(n)
}
