package bench

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

const meminfo = `MemTotal:       24684400 kB
MemFree:        10000000 kB
MemAvailable:   20000000 kB
HugePages_Total:       0
`

const cpuinfo = `processor	: 0
vendor_id	: AuthenticAMD
model name	: AMD EPYC   7B13 64-Core Processor
flags		: fpu vme

processor	: 1
model name	: something else
`

func TestParseKV(t *testing.T) {
	tests := []struct {
		name, in string
		want     map[string]string
	}{
		{"meminfo", meminfo, map[string]string{"MemTotal": "24684400 kB", "MemFree": "10000000 kB",
			"MemAvailable": "20000000 kB", "HugePages_Total": "0"}},
		{"first occurrence wins", "a: 1\na: 2\n", map[string]string{"a": "1"}},
		{"no colon ignored, empty key ignored", "junk\n: x\nk:v", map[string]string{"k": "v"}},
		{"value keeps inner colons", "t: 1:2:3", map[string]string{"t": "1:2:3"}},
		{"empty", "", map[string]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ParseKV([]byte(tt.in))
			if len(got) != len(tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
			for k, v := range tt.want {
				if got[k] != v {
					t.Errorf("%q = %q, want %q", k, got[k], v)
				}
			}
		})
	}
}

func TestMachineParsers(t *testing.T) {
	if got := CPUModel([]byte(cpuinfo)); got != "AMD EPYC 7B13 64-Core Processor" {
		t.Errorf("CPUModel = %q", got)
	}
	if got := CPUModel([]byte("Processor : ARMv8\n")); got != "ARMv8" {
		t.Errorf("arm CPUModel = %q", got)
	}
	if got := CPUModel(nil); got != "unknown" {
		t.Errorf("empty CPUModel = %q", got)
	}
	for in, want := range map[string]int64{"20000000 kB": 20000000 << 10, "0": 0, "12 KB": 12 << 10, "x kB": -1, "": -1, "-5 kB": -1} {
		if got := parseKB(in); got != want {
			t.Errorf("parseKB(%q) = %d, want %d", in, got, want)
		}
	}
	if got := ParseLoadAvg([]byte("0.52 1.25 12.00 3/400 12345\n")); got != [3]float64{0.52, 1.25, 12} {
		t.Errorf("ParseLoadAvg = %v", got)
	}
	if got := ParseLoadAvg([]byte("NaN -1 x")); got != [3]float64{} {
		t.Errorf("ParseLoadAvg(garbage) = %v", got)
	}
	if got := osPretty([]byte("NAME=x\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n")); got != "Debian GNU/Linux 12 (bookworm)" {
		t.Errorf("osPretty = %q", got)
	}
}

// A real /proc/net/tcp: one LISTEN on 127.0.0.1:7070 (0x1B9E), one
// established connection from that port (state 01), one LISTEN elsewhere.
const netTCP = `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1B9E 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 555481 1 0000000000000000 100 0 0 10 0
   1: 0100007F:1B9E 0100007F:D2A4 01 00000000:00000000 00:00000000 00000000     0        0 555999 1 0000000000000000 20 4 30 10 -1
   2: 00000000:0016 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1593 1 0000000000000000 100 0 0 10 0
`

func TestListeningInodes(t *testing.T) {
	tests := []struct {
		name string
		in   string
		port uint16
		want []uint64
	}{
		{"listen only", netTCP, 7070, []uint64{555481}},
		{"other port", netTCP, 22, []uint64{1593}},
		{"none", netTCP, 80, nil},
		{"header only", "  sl  local_address\n", 7070, nil},
		{"inode 0 ignored", "0: 0100007F:1B9E 0:0 0A a b c 0 0 0\n", 7070, nil},
		{"bad port ignored", "0: 0100007F:ZZZZ 0:0 0A a b c 0 0 9\n", 7070, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ListeningInodes([]byte(tt.in), tt.port); !slices.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestServerPIDNotLoopback(t *testing.T) {
	for _, u := range []string{"http://192.0.2.1:7070", "http://example.com", "::bad::", "http://127.0.0.1:notaport"} {
		if pid := ServerPID(u); pid != 0 {
			t.Errorf("ServerPID(%q) = %d, want 0", u, pid)
		}
	}
}

func TestNonLoopbackInterfaces(t *testing.T) {
	none := "Inter-|   Receive                                                |  Transmit\n face |bytes    packets errs drop fifo frame compressed multicast|bytes\n    lo:       0       0    0    0    0     0          0         0        0\n"
	tests := []struct {
		in   string
		want int
	}{
		{none, 0},
		{none + "  eth0: 1 2 3\n", 1},
		{none + "  veth-x: 1\n  wg0: 2\n", 2},
		{"", 0},
	}
	for _, tt := range tests {
		if got := NonLoopbackInterfaces(tt.in); got != tt.want {
			t.Errorf("NonLoopbackInterfaces(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

func TestParseOpenAPIPaths(t *testing.T) {
	got, err := parseOpenAPIPaths(strings.NewReader(`{"openapi":"3.1.0","paths":{"/v1/sandboxes":{},"/healthz":{},"/v1/sandboxes/{id}/files":{}}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"/healthz", "/v1/sandboxes", "/v1/sandboxes/{id}/files"}
	if !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	c := &capabilities{paths: got}
	if c.lacks("/files", "files") != "" || c.lacks("/browser", "the browser") == "" {
		t.Errorf("lacks misjudges %v", got)
	}
	if _, err := parseOpenAPIPaths(strings.NewReader(`{"paths":`)); err == nil {
		t.Error("truncated document accepted")
	}
}

func FuzzParseKV(f *testing.F) {
	f.Add([]byte(meminfo))
	f.Add([]byte(cpuinfo))
	f.Add([]byte("VmRSS:\t  1234 kB\n"))
	f.Add([]byte(":::\n\x00:\xff"))
	f.Fuzz(func(t *testing.T, b []byte) {
		kv := ParseKV(b)
		if len(kv) > 4096 {
			t.Fatalf("%d keys", len(kv))
		}
		for k, v := range kv {
			if k == "" || k != strings.TrimSpace(k) || v != strings.TrimSpace(v) {
				t.Fatalf("untrimmed %q: %q", k, v)
			}
			if n := parseKB(v); n < -1 {
				t.Fatalf("parseKB(%q) = %d", v, n)
			}
		}
		if m := CPUModel(b); m == "" {
			t.Fatal("empty model")
		}
	})
}

func FuzzListeningInodes(f *testing.F) {
	f.Add([]byte(netTCP), uint16(7070))
	f.Add([]byte("0: 0:0 0:0 0A 0 0 0 0 0 1"), uint16(0))
	f.Fuzz(func(t *testing.T, b []byte, port uint16) {
		got := ListeningInodes(b, port)
		if len(got) > 64 {
			t.Fatalf("%d inodes", len(got))
		}
		for _, ino := range got {
			if ino == 0 {
				t.Fatal("inode 0")
			}
		}
	})
}

func FuzzParseLoadAvg(f *testing.F) {
	f.Add([]byte("0.52 1.25 12.00 3/400 12345\n"))
	f.Add([]byte("1e308 inf -0"))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, v := range ParseLoadAvg(b) {
			if v < 0 || v >= 1e9 || v != v {
				t.Fatalf("load %v", v)
			}
		}
	})
}

func FuzzNonLoopbackInterfaces(f *testing.F) {
	f.Add("    lo: 0 0\n  eth0: 1\n")
	f.Add("a:b:c\n|x: y\n")
	f.Fuzz(func(t *testing.T, s string) {
		if n := NonLoopbackInterfaces(s); n < 0 || n > strings.Count(s, ":") {
			t.Fatalf("%d interfaces in %q", n, s)
		}
	})
}

func FuzzParseOpenAPIPaths(f *testing.F) {
	f.Add(`{"paths":{"/a":{},"/b":{}}}`)
	f.Add(`{"paths":null}`)
	f.Add(`[]`)
	f.Fuzz(func(t *testing.T, s string) {
		paths, err := parseOpenAPIPaths(strings.NewReader(s))
		if err != nil {
			return
		}
		if !slices.IsSorted(paths) {
			t.Fatalf("unsorted %v", paths)
		}
	})
}

func FuzzSelect(f *testing.F) {
	f.Add("peer")
	f.Add("paddock/exec/")
	f.Add("\xff/")
	f.Fuzz(func(t *testing.T, s string) {
		got, err := Select([]string{s})
		if err != nil {
			if !utf8.ValidString(err.Error()) && utf8.ValidString(s) {
				t.Fatalf("invalid message %q", err)
			}
			return
		}
		if len(got) == 0 {
			t.Fatalf("Select(%q) picked nothing without an error", s)
		}
		for _, n := range got {
			if Describe(n) == "" {
				t.Fatalf("picked unknown %q", n)
			}
		}
	})
}

func TestParseCurlTiming(t *testing.T) {
	tests := []struct {
		in    string
		n     int64
		secs  float64
		valid bool
	}{
		{"1024 0.001234\n", 1024, 0.001234, true},
		{"0 0.5", 0, 0.5, true},
		{"1024", 0, 0, false},
		{"-1 0.5", 0, 0, false},
		{"10 0", 0, 0, false},
		{"10 NaN", 0, 0, false},
		{"10 0.1 extra", 0, 0, false},
		{"", 0, 0, false},
	}
	for _, tt := range tests {
		n, secs, ok := ParseCurlTiming(tt.in)
		if ok != tt.valid || n != tt.n || secs != tt.secs {
			t.Errorf("ParseCurlTiming(%q) = %d, %g, %v", tt.in, n, secs, ok)
		}
	}
}

func FuzzParseCurlTiming(f *testing.F) {
	f.Add("1024 0.001234\n")
	f.Add("1e3 inf")
	f.Fuzz(func(t *testing.T, s string) {
		n, secs, ok := ParseCurlTiming(s)
		if ok && (n < 0 || !(secs > 0) || secs > 1e6) {
			t.Fatalf("accepted %d %g from %q", n, secs, s)
		}
	})
}
