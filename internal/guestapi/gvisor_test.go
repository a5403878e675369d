package guestapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

const testToken = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func TestHello(t *testing.T) {
	other := strings.Repeat("f", TokenLen)
	for _, c := range []struct {
		name string
		in   []byte
		ok   bool
	}{
		{"right", Hello(testToken), true},
		{"other token", Hello(other), false},
		{"truncated", Hello(testToken)[:HelloLen-1], false},
		{"empty", nil, false},
		{"no newline", append(Hello(testToken)[:HelloLen-1], ' '), false},
		{"http instead", []byte("GET / HTTP/1.1\r\nHost: guest\r\n\r\n" + strings.Repeat("x", HelloLen)), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := bytes.NewReader(append(c.in, "REST"...))
			err := CheckHello(r, testToken)
			if (err == nil) != c.ok {
				t.Fatalf("CheckHello = %v, want ok=%v", err, c.ok)
			}
			if c.ok {
				// Nothing past the hello is consumed.
				rest := make([]byte, 4)
				if _, err := r.Read(rest); err != nil || string(rest) != "REST" {
					t.Fatalf("after the hello: %q %v", rest, err)
				}
			} else if !errors.Is(err, ErrBadHello) {
				t.Fatalf("error %v is not ErrBadHello", err)
			}
		})
	}
	if err := CheckHello(bytes.NewReader(Hello(testToken)), "short"); err == nil {
		t.Fatal("an invalid expected token matched")
	}
}

func FuzzCheckHello(f *testing.F) {
	f.Add(Hello(testToken))
	f.Add([]byte("PADDOCK-GUEST/1 \n"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		err := CheckHello(bytes.NewReader(b), testToken)
		if err == nil && !bytes.HasPrefix(b, Hello(testToken)) {
			t.Fatalf("accepted %q", b)
		}
	})
}

func TestParseGVisorBoot(t *testing.T) {
	good, _ := json.Marshal(GVisorBoot{Config: Config{Version: Version, ID: "x"}, Token: testToken, Pids: 10})
	if b, err := ParseGVisorBoot(good); err != nil || b.Pids != 10 || b.Config.ID != "x" {
		t.Fatalf("good boot: %+v %v", b, err)
	}
	for name, in := range map[string]string{
		"not json":     "{",
		"old protocol": `{"config":{"version":0},"token":"` + testToken + `"}`,
		"no token":     `{"config":{"version":` + itoa(Version) + `}}`,
		"bad token":    `{"config":{"version":` + itoa(Version) + `},"token":"` + strings.Repeat("z", TokenLen) + `"}`,
		"too large":    `{"x":"` + strings.Repeat("a", maxBoot) + `"}`,
	} {
		if _, err := ParseGVisorBoot([]byte(in)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

func FuzzParseGVisorBoot(f *testing.F) {
	good, _ := json.Marshal(GVisorBoot{Config: Config{Version: Version}, Token: testToken})
	f.Add(good)
	f.Add([]byte(`{"config":{"version":1},"token":""}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		boot, err := ParseGVisorBoot(b)
		if err == nil && (boot.Config.Version != Version || len(boot.Token) != TokenLen) {
			t.Fatalf("accepted %+v", boot)
		}
	})
}
