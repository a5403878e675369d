package api

import "testing"

func TestParseByteRange(t *testing.T) {
	for _, tc := range []struct {
		in                  string
		off, length, suffix int64
		bad                 bool
	}{
		{in: "bytes=0-4", off: 0, length: 5},
		{in: "bytes=7-", off: 7},
		{in: "bytes=-3", suffix: 3},
		{in: " bytes=2-2", off: 2, length: 1},
		{in: "bytes=5-4", bad: true},
		{in: "bytes=0-1,3-4", bad: true},
		{in: "bytes=-0", bad: true},
		{in: "bytes=-", bad: true},
		{in: "bytes=a-b", bad: true},
		{in: "items=0-1", bad: true},
		{in: "bytes=-1-2", bad: true},
	} {
		off, length, suffix, err := parseByteRange(tc.in)
		if tc.bad {
			if err == nil {
				t.Errorf("parseByteRange(%q) = %d %d %d, want an error", tc.in, off, length, suffix)
			}
			continue
		}
		if err != nil || off != tc.off || length != tc.length || suffix != tc.suffix {
			t.Errorf("parseByteRange(%q) = %d %d %d %v", tc.in, off, length, suffix, err)
		}
	}
}

// FuzzParseByteRange: an accepted range is non-negative and non-empty.
func FuzzParseByteRange(f *testing.F) {
	for _, s := range []string{"bytes=0-4", "bytes=-3", "bytes=7-", "bytes=9223372036854775807-", "bytes=0-9223372036854775807", "bytes=,"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		off, length, suffix, err := parseByteRange(h)
		if err != nil {
			return
		}
		if off < 0 || length < 0 || suffix < 0 || (suffix > 0 && (off != 0 || length != 0)) {
			t.Fatalf("parseByteRange(%q) = %d %d %d", h, off, length, suffix)
		}
	})
}
