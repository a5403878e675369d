package codewire

import (
	"encoding/json"
	"testing"
)

func TestResultText(t *testing.T) {
	for _, c := range []struct {
		name   string
		bundle map[string]string
		want   string
		ok     bool
	}{
		{"plain wins", map[string]string{"text/html": `"<b>2</b>"`, "text/plain": `"2"`}, "2", true},
		{"markdown before html", map[string]string{"text/html": `"<i>x</i>"`, "text/markdown": `"*x*"`}, "*x*", true},
		{"json is shown raw", map[string]string{"application/json": `{"a":1}`}, `{"a":1}`, true},
		{"image only", map[string]string{"image/png": `"iVBOR"`}, "", false},
		{"empty", nil, "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := Result{Bundle: map[string]json.RawMessage{}}
			for k, v := range c.bundle {
				r.Bundle[k] = json.RawMessage(v)
			}
			got, ok := r.Text()
			if got != c.want || ok != c.ok {
				t.Fatalf("Text() = %q, %v; want %q, %v", got, ok, c.want, c.ok)
			}
		})
	}
}
