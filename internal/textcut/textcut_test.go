package textcut

import "testing"

func TestCuts(t *testing.T) {
	euro := "€" // 3 bytes: e2 82 ac
	for _, c := range []struct{ in, end, start string }{
		{"abc", "abc", "abc"},
		{"ab" + euro[:2], "ab", "ab" + euro[:2]},
		{"ab" + euro, "ab" + euro, "ab" + euro},
		{euro[1:] + "xy", euro[1:] + "xy", "xy"},
		{euro[2:], euro[2:], euro[2:]}, // no start within reach: kept
		{"", "", ""},
	} {
		if got := string(TrimPartialEnd([]byte(c.in))); got != c.end {
			t.Errorf("TrimPartialEnd(%q) = %q, want %q", c.in, got, c.end)
		}
		if got := string(TrimPartialStart([]byte(c.in))); got != c.start {
			t.Errorf("TrimPartialStart(%q) = %q, want %q", c.in, got, c.start)
		}
	}
	if got := Valid("a\xffb"); got != "a\uFFFDb" {
		t.Errorf("Valid = %q", got)
	}
	if s := "plain €"; Valid(s) != s {
		t.Error("Valid changed valid text")
	}
}
