package process

import (
	"bytes"
	"testing"
)

// model is the obvious ring: everything, then the last max bytes.
type model struct {
	all []byte
	max int
}

func (m *model) kept() (start int64, b []byte) {
	if len(m.all) <= m.max {
		return 0, m.all
	}
	return int64(len(m.all) - m.max), m.all[len(m.all)-m.max:]
}

func checkRing(t *testing.T, r *Ring, m *model) {
	t.Helper()
	start, want := m.kept()
	if r.start != start || r.end != int64(len(m.all)) {
		t.Fatalf("ring [%d,%d), model [%d,%d)", r.start, r.end, start, len(m.all))
	}
	if len(r.buf) > r.max {
		t.Fatalf("buffer %d bytes over max %d", len(r.buf), r.max)
	}
	// Read everything kept in odd-sized pieces, from every kind of offset.
	got := make([]byte, 0, len(want))
	dst := make([]byte, 7)
	for off := r.start; off < r.end; {
		n := r.readAt(off, dst)
		if n == 0 {
			t.Fatalf("readAt(%d) = 0 inside [%d,%d)", off, r.start, r.end)
		}
		got = append(got, dst[:n]...)
		off += int64(n)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("ring holds %q, want %q", got, want)
	}
	if r.start > 0 && r.readAt(r.start-1, dst) != 0 {
		t.Fatal("read below start")
	}
	if r.readAt(r.end, dst) != 0 {
		t.Fatal("read at end")
	}
}

func TestRing(t *testing.T) {
	r, m := NewRing(10), &model{max: 10}
	for _, w := range []string{"", "abc", "defgh", "ij", "k", "0123456789ABCDEF", "xy", "z"} {
		r.write([]byte(w))
		m.all = append(m.all, w...)
		checkRing(t, r, m)
	}
	// Growth is lazy: a quiet ring allocates nothing.
	if q := NewRing(1 << 20); len(q.buf) != 0 {
		t.Fatal("allocated before any write")
	}
	big := NewRing(1 << 20)
	big.write(make([]byte, 100))
	if len(big.buf) > 4096 {
		t.Fatalf("100 bytes grew the buffer to %d", len(big.buf))
	}
}

func FuzzRing(f *testing.F) {
	f.Add(uint16(10), []byte("hello world, this is a ring buffer"), []byte{3, 1, 4, 1, 5, 9, 2, 6})
	f.Add(uint16(1), []byte("ab"), []byte{0, 1, 2})
	f.Add(uint16(4096), bytes.Repeat([]byte("y\n"), 5000), []byte{255, 255, 7})
	f.Fuzz(func(t *testing.T, max uint16, data, cuts []byte) {
		if max == 0 {
			return
		}
		r, m := NewRing(int(max)), &model{max: int(max)}
		for _, c := range cuts {
			n := int(c) * 17 % (len(data) + 1)
			r.write(data[:n])
			m.all = append(m.all, data[:n]...)
			data = data[n:]
			checkRing(t, r, m)
		}
		r.write(data)
		m.all = append(m.all, data...)
		checkRing(t, r, m)
	})
}
