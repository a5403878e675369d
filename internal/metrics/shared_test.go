package metrics

import (
	"net/http/httptest"
	"testing"

	"github.com/paddockhq/paddock/internal/gate"
	"github.com/paddockhq/paddock/internal/sandbox"
)

func TestExecOutcome(t *testing.T) {
	cases := []struct {
		e    sandbox.Event
		want string
	}{
		{sandbox.Event{Data: map[string]any{"exit_code": 0, "signal": "", "oom_killed": false}}, OutcomeOK},
		{sandbox.Event{Data: map[string]any{"exit_code": 2}}, OutcomeNonzero},
		{sandbox.Event{Data: map[string]any{"exit_code": 137, "signal": "killed", "oom_killed": true}}, OutcomeOOM},
		{sandbox.Event{Data: map[string]any{"exit_code": 124, "timed_out": true, "signal": "killed"}}, OutcomeTimeout},
		{sandbox.Event{Data: map[string]any{"exit_code": 143, "signal": "terminated"}}, OutcomeSignaled},
		{sandbox.Event{Error: "sandbox not found"}, OutcomeError},
	}
	for _, c := range cases {
		if got := ExecOutcome(c.e); got != c.want {
			t.Errorf("ExecOutcome(%+v) = %s, want %s", c.e, got, c.want)
		}
	}
}

func TestLabelsAreBounded(t *testing.T) {
	for body, want := range map[string]string{
		`{"error":{"code":"not_found","message":"x"}}`:           "not_found",
		`{"error":{"code":"NOT an enum","message":"x"}}`:         "",
		`{"error":{"code":"` + string(make([]byte, 100)) + `"}}`: "",
		`<html>`: "",
	} {
		if got := codeLabel(gate.ErrorCode([]byte(body))); got != want {
			t.Errorf("codeLabel(gate.ErrorCode(%q)) = %q", body, got)
		}
	}
	r := httptest.NewRequest("GET", "/v1/sandboxes/abc123/secret-path", nil)
	pub := map[string]bool{"/healthz": true}
	if got := routeLabel(&reqInfo{}, r, 404, pub); got != "(unmatched)" {
		t.Errorf("raw path leaked into a label: %s", got)
	}
	if got := routeLabel(&reqInfo{route: "GET /v1/sandboxes/{id}"}, r, 200, pub); got != "/v1/sandboxes/{id}" {
		t.Errorf("route label %s", got)
	}
	if got := methodLabel("BREW"); got != "OTHER" {
		t.Errorf("method label %s", got)
	}
}
