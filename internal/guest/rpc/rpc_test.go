package rpc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/guestapi"
)

type echo struct {
	N int `json:"n"`
}

func post(t *testing.T, h http.Handler, body []byte) (*httptest.ResponseRecorder, []frame) {
	t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/r", bytes.NewReader(body)))
	var frames []frame
	fr := guestapi.NewFrameReader(bufio.NewReader(bytes.NewReader(w.Body.Bytes())))
	for {
		typ, p, err := fr.Next()
		if err != nil {
			break
		}
		frames = append(frames, frame{typ, string(p)})
	}
	return w, frames
}

type frame struct {
	typ byte
	p   string
}

func head(v any) []byte {
	b, _ := guestapi.AppendHead(nil, v)
	return b
}

func TestUnary(t *testing.T) {
	h := Unary(64, func(r *http.Request, req *echo) (echo, error) {
		if req.N < 0 {
			return echo{}, errs.Wrap(errs.CodeNotFound, errors.New("/host/secret/path"), "no such thing")
		}
		return echo{N: req.N * 2}, nil
	})
	for _, c := range []struct {
		name   string
		body   []byte
		status int
		typ    byte
		want   string
	}{
		{"answer", head(echo{N: 21}), 200, guestapi.FrameHead, `{"n":42}`},
		{"coded error", head(echo{N: -1}), 404, guestapi.FrameError, `{"code":"not_found","message":"no such thing"}`},
		{"no head", []byte("nonsense"), 400, guestapi.FrameError, ""},
		{"head over the bound", head(map[string]string{"x": string(make([]byte, 100))}), 413, guestapi.FrameError, ""},
	} {
		w, frames := post(t, h, c.body)
		if w.Code != c.status || len(frames) != 1 || frames[0].typ != c.typ || (c.want != "" && frames[0].p != c.want) {
			t.Errorf("%s: status %d, frames %q", c.name, w.Code, frames)
		}
		if bytes.Contains(w.Body.Bytes(), []byte("/host/")) {
			t.Errorf("%s: the answer carries the internal cause: %s", c.name, w.Body.Bytes())
		}
	}
}

func TestStreamedFailsInBand(t *testing.T) {
	h := Streamed(64, func(r *http.Request, req *echo, a *Answer) error {
		if req.N == 0 {
			return errs.Invalid("refused before the stream")
		}
		if err := a.Head(guestapi.Empty{}); err != nil {
			return err
		}
		_ = a.F.Send(guestapi.FrameStdout, []byte("out"))
		if req.N == 1 {
			return errs.New(errs.CodeConflict, "broke half-way")
		}
		return a.End(echo{N: req.N})
	})
	w, frames := post(t, h, head(echo{N: 0}))
	if w.Code != 400 || len(frames) != 1 || frames[0].typ != guestapi.FrameError {
		t.Fatalf("an early error: status %d, frames %q", w.Code, frames)
	}
	w, frames = post(t, h, head(echo{N: 1}))
	if w.Code != 200 || len(frames) != 3 || frames[2].typ != guestapi.FrameError {
		t.Fatalf("a late error: status %d, frames %q", w.Code, frames)
	}
	var e guestapi.Error
	if json.Unmarshal([]byte(frames[2].p), &e) != nil || e.Code != string(errs.CodeConflict) {
		t.Fatalf("late error frame %q", frames[2].p)
	}
	w, frames = post(t, h, head(echo{N: 2}))
	if w.Code != 200 || len(frames) != 3 || frames[0].typ != guestapi.FrameHead || frames[1].p != "out" || frames[2].typ != guestapi.FrameEnd {
		t.Fatalf("a stream: status %d, frames %q", w.Code, frames)
	}
}

func TestRangeErrorStatus(t *testing.T) {
	h := Unary(64, func(*http.Request, *echo) (echo, error) {
		return echo{}, &guestapi.RangeError{Size: 7, Err: errs.Invalid("past the end")}
	})
	w, frames := post(t, h, head(echo{}))
	if w.Code != http.StatusRequestedRangeNotSatisfiable || len(frames) != 1 {
		t.Fatalf("status %d, frames %q", w.Code, frames)
	}
	if re, ok := guestapi.IsRange(guestapi.AsError([]byte(frames[0].p))); !ok || re.Size != 7 {
		t.Fatalf("the range error did not come back: %q", frames[0].p)
	}
}

func TestUpgradable(t *testing.T) {
	for _, c := range []struct {
		conn, up string
		ok       bool
	}{
		{"Upgrade", "paddock-attach/1", true},
		{"keep-alive, upgrade", "websocket, paddock-attach/1", true},
		{"keep-alive", "paddock-attach/1", false},
		{"Upgrade", "paddock-attach/2", false},
	} {
		r := httptest.NewRequest(http.MethodPost, "/", nil)
		r.Header.Set("Connection", c.conn)
		r.Header.Set("Upgrade", c.up)
		if got := Upgradable(r, "paddock-attach/1"); got != c.ok {
			t.Errorf("Connection %q Upgrade %q: %v", c.conn, c.up, got)
		}
	}
}
