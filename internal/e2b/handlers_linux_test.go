//go:build linux

package e2b_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/e2b"
)

// TestControlPlane drives the control plane's handlers with raw requests
// (the SDK test covers the happy paths the SDK takes).
func TestControlPlane(t *testing.T) {
	s := newStack(t)
	key := s.key(t, "ctl").Key
	readOnly := s.key(t, "ctl", auth.ScopeRead).Key
	sb := s.create(t, key, `{"templateID":"base","metadata":{"app":"x"},"timeout":120}`)
	if sb.TemplateID != "host" || sb.EnvdVersion != e2b.EnvdVersion || !strings.HasPrefix(sb.EnvdAccessToken, auth.TokenPrefix) {
		t.Fatalf("create answered %+v", sb)
	}
	victim := s.create(t, key, `{}`)
	id := sb.SandboxID
	jsonKey := map[string]string{"X-API-KEY": key, "Content-Type": "application/json"}
	for _, tc := range []struct {
		name, method, path string
		hdr                map[string]string
		body               string
		status             int
		want               string // in the body
	}{
		{"no key", "GET", "/v2/sandboxes", nil, "", 401, `"code":401`},
		{"a malformed key", "GET", "/v2/sandboxes", map[string]string{"X-API-KEY": "e2b_zz"}, "", 401, "invalid"},
		{"an unknown key", "GET", "/v2/sandboxes", map[string]string{"X-API-KEY": auth.NewE2BKey()}, "", 401, "invalid"},
		{"a bearer key works too", "GET", "/sandboxes/" + id, map[string]string{"Authorization": "Bearer " + key}, "", 200, `"sandboxID":"` + id},
		{"scope", "POST", "/v2/sandboxes", map[string]string{"X-API-KEY": readOnly}, `{}`, 403, `lacks the \"write\" scope`},
		{"unknown field", "POST", "/v2/sandboxes", jsonKey, `{"templateID":"base","colour":"red"}`, 400, `field \"colour\" is not supported`},
		{"malformed JSON", "POST", "/v2/sandboxes", jsonKey, `{"templateID":`, 400, "truncated"},
		{"auto-resume without auto-pause", "POST", "/v2/sandboxes", jsonKey, `{"autoResume":{"enabled":true}}`, 400, "autoPause"},
		{"auto-pause off is fine", "POST", "/v2/sandboxes", jsonKey, `{"autoPause":false,"secure":true,"allow_internet_access":false}`, 201, `"envdVersion"`},
		{"mcp gateway", "POST", "/v2/sandboxes", jsonKey, `{"mcp":{"x":{}}}`, 501, "/mcp"},
		{"volumes", "POST", "/v2/sandboxes", jsonKey, `{"volumeMounts":[{"name":"v","path":"/v"}]}`, 501, "volume"},
		{"negative timeout", "POST", "/v2/sandboxes", jsonKey, `{"timeout":-1}`, 400, "timeout"},
		{"timeout over the ceiling", "POST", "/v2/sandboxes", jsonKey, `{"timeout":999999999}`, 400, "timeout"},
		{"bad metadata key", "POST", "/v2/sandboxes", jsonKey, `{"metadata":{"no spaces":"x"}}`, 400, "label key"},
		{"bad env name", "POST", "/v2/sandboxes", jsonKey, `{"envVars":{"1X":"y"}}`, 400, "environment variable"},
		{"deny list with a domain", "POST", "/v2/sandboxes", jsonKey, `{"network":{"denyOut":["example.com"]}}`, 400, "denyOut"},
		{"internet without networking on this server", "POST", "/v2/sandboxes", jsonKey, `{"allow_internet_access":true}`, 501, "network"},
		{"unknown E2B template: the default", "POST", "/sandboxes", jsonKey, `{"templateID":"code-interpreter-v1"}`, 201, `"templateID":"host"`},
		{"get", "GET", "/sandboxes/" + id, map[string]string{"X-API-KEY": key}, "", 200, `"metadata":{"app":"x"}`},
		{"get: state and lifecycle", "GET", "/sandboxes/" + id, map[string]string{"X-API-KEY": key}, "", 200, `"lifecycle":{"autoResume":false,"onTimeout":"kill"}`},
		{"get: unknown", "GET", "/sandboxes/sb-" + strings.Repeat("a", 26), map[string]string{"X-API-KEY": key}, "", 404, `"code":404`},
		{"get: malformed id", "GET", "/sandboxes/..%2f..", map[string]string{"X-API-KEY": key}, "", 404, `"code":404`},
		{"list v1", "GET", "/sandboxes?metadata=app%3Dx", map[string]string{"X-API-KEY": key}, "", 200, `"sandboxID":"` + id},
		{"list: bad query", "GET", "/v2/sandboxes?limit=0", map[string]string{"X-API-KEY": key}, "", 400, "limit"},
		{"list: paused is empty", "GET", "/v2/sandboxes?state=paused", map[string]string{"X-API-KEY": key}, "", 200, "[]"},
		{"timeout", "POST", "/sandboxes/" + id + "/timeout", jsonKey, `{"timeout":600}`, 204, ""},
		{"timeout: missing", "POST", "/sandboxes/" + id + "/timeout", jsonKey, `{}`, 400, "timeout"},
		{"timeout: zero", "POST", "/sandboxes/" + id + "/timeout", jsonKey, `{"timeout":0}`, 400, "timeout"},
		{"refresh", "POST", "/sandboxes/" + id + "/refreshes", jsonKey, `{"duration":30}`, 204, ""},
		{"connect v1", "POST", "/sandboxes/" + id + "/connect", jsonKey, `{"timeout":60}`, 200, `"envdAccessToken":"pdt_`},
		{"connect: read scope suffices", "POST", "/v2/sandboxes/" + id + "/connect", map[string]string{"X-API-KEY": readOnly}, ``, 200, `"envdAccessToken":"pdt_`},
		// This stack has no sandbox networking: the change reaches the
		// manager, which says so (internal/network tests the policies).
		{"network: reaches the manager", "PUT", "/sandboxes/" + id + "/network", jsonKey, `{"allow_internet_access":false}`, 501, "no sandbox networking"},
		{"network: rules for a wildcard domain", "PUT", "/sandboxes/" + id + "/network", jsonKey, `{"rules":{"*.a.com":[{"transform":{"headers":{"X-A":"1"}}}]}}`, 501, "wildcard"},
		{"resume of a running sandbox", "POST", "/sandboxes/" + id + "/resume", jsonKey, `{}`, 409, "not paused"},
		{"pause: unknown field", "POST", "/sandboxes/" + id + "/pause", jsonKey, `{"bogus":1}`, 400, "bogus"},
		{"pause of another sandbox", "POST", "/sandboxes/sb-nope/pause", jsonKey, `{}`, 404, ""},
		{"metrics", "GET", "/sandboxes/" + id + "/metrics", map[string]string{"X-API-KEY": key}, "", 200, `"memTotal":`},
		{"metrics: a time range", "GET", "/sandboxes/" + id + "/metrics?start=1&end=99999999999", map[string]string{"X-API-KEY": key}, "", 200, `"timestampUnix":`},
		{"metrics: a range in the past is empty", "GET", "/sandboxes/" + id + "/metrics?start=1&end=2", map[string]string{"X-API-KEY": key}, "", 200, `[]`},
		{"metrics: a bad start", "GET", "/sandboxes/" + id + "/metrics?start=yesterday", map[string]string{"X-API-KEY": key}, "", 400, "start"},
		{"metrics: unknown parameter", "GET", "/sandboxes/" + id + "/metrics?step=5", map[string]string{"X-API-KEY": key}, "", 400, "step"},
		{"metrics of another sandbox", "GET", "/sandboxes/sb-" + strings.Repeat("a", 26) + "/metrics", map[string]string{"X-API-KEY": key}, "", 404, ""},
		{"metrics of many", "GET", "/sandboxes/metrics?sandbox_ids=" + id + ",sb-" + strings.Repeat("a", 26), map[string]string{"X-API-KEY": key}, "", 200, `{"sandboxes":{"` + id + `":{`},
		{"metrics of many: none named", "GET", "/sandboxes/metrics", map[string]string{"X-API-KEY": key}, "", 400, "sandbox_ids"},
		{"snapshot: a bad name", "POST", "/sandboxes/" + id + "/snapshots", jsonKey, `{"name":"../x"}`, 400, ""},
		{"snapshots: unknown query", "GET", "/snapshots?bogus=1", jsonKey, ``, 400, "bogus"},
		{"snapshots: bad limit", "GET", "/snapshots?limit=0", jsonKey, ``, 400, "limit"},
		{"delete a snapshot that is not there", "DELETE", "/templates/nope", jsonKey, ``, 404, "no snapshot"},
		{"fork: too many", "POST", "/sandboxes/" + id + "/fork", jsonKey, `{"count":101}`, 400, "count"},
		{"fork of a sandbox that is not there", "POST", "/sandboxes/sb-nope/fork", jsonKey, `{"count":1}`, 404, ""},
		{"unknown path", "GET", "/sandboxes/" + id + "/nothing", map[string]string{"X-API-KEY": key}, "", 404, "no such endpoint"},
		{"wrong method", "PATCH", "/sandboxes/" + id, map[string]string{"X-API-KEY": key}, "", 405, `"code":405`},
		{"kill", "DELETE", "/sandboxes/" + victim.SandboxID, map[string]string{"X-API-KEY": key}, "", 204, ""},
		{"kill again", "DELETE", "/sandboxes/" + victim.SandboxID, map[string]string{"X-API-KEY": key}, "", 404, `"code":404`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, _, b := s.do(t, tc.method, tc.path, tc.hdr, []byte(tc.body))
			if st != tc.status || !strings.Contains(string(b), tc.want) {
				t.Fatalf("%s %s: %d %s; want %d with %s", tc.method, tc.path, st, b, tc.status, tc.want)
			}
			if st >= 400 && !strings.Contains(string(b), `"message":`) {
				t.Fatalf("not E2B's error shape: %s", b)
			}
		})
	}
}

// TestListPagination: pages follow each other without overlap, newest
// first by default, with x-next-token until the last.
func TestListPagination(t *testing.T) {
	s := newStack(t)
	key := s.key(t, "pages").Key
	want := map[string]bool{}
	for i := 0; i < 5; i++ {
		want[s.create(t, key, `{"metadata":{"set":"p"}}`).SandboxID] = true
	}
	for _, order := range []string{"desc", "asc"} {
		seen := map[string]bool{}
		var prev string
		token := ""
		for page := 0; page < 10; page++ {
			path := "/v2/sandboxes?limit=2&order=" + order + "&metadata=set%3Dp"
			if token != "" {
				path += "&nextToken=" + token
			}
			st, h, b := s.do(t, "GET", path, map[string]string{"X-API-KEY": key}, nil)
			if st != 200 {
				t.Fatalf("%d %s", st, b)
			}
			var items []struct {
				SandboxID string `json:"sandboxID"`
				StartedAt string `json:"startedAt"`
			}
			if err := json.Unmarshal(b, &items); err != nil {
				t.Fatal(err)
			}
			for _, it := range items {
				if seen[it.SandboxID] {
					t.Fatalf("%s listed twice", it.SandboxID)
				}
				seen[it.SandboxID] = true
				if prev != "" && ((order == "desc" && it.StartedAt > prev) || (order == "asc" && it.StartedAt < prev)) {
					t.Fatalf("order %s broken: %s after %s", order, it.StartedAt, prev)
				}
				prev = it.StartedAt
			}
			token = h.Get("X-Next-Token")
			if token == "" {
				break
			}
		}
		if len(seen) != len(want) {
			t.Fatalf("order %s: listed %d of %d", order, len(seen), len(want))
		}
	}
	if st, _, _ := s.do(t, "GET", "/v2/sandboxes?nextToken=forged", map[string]string{"X-API-KEY": key}, nil); st != 400 {
		t.Fatalf("a forged nextToken: %d", st)
	}
}

// TestEnvdPlain: /health and /files.
func TestEnvdPlain(t *testing.T) {
	s := newStack(t)
	key := s.key(t, "files").Key
	sb := s.create(t, key, `{}`)
	h := envdHeaders(sb.SandboxID, sb.EnvdAccessToken)
	with := func(extra map[string]string) map[string]string {
		out := map[string]string{}
		for k, v := range h {
			out[k] = v
		}
		for k, v := range extra {
			out[k] = v
		}
		return out
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write([]byte("zipped"))
	_ = zw.Close()
	mp := func(parts map[string]string, field string) (string, []byte) {
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		for name, data := range parts {
			hdr := textproto.MIMEHeader{}
			hdr.Set("Content-Disposition", `form-data; name="`+field+`"; filename="`+name+`"`)
			w, _ := mw.CreatePart(hdr)
			_, _ = w.Write([]byte(data))
		}
		_ = mw.Close()
		return mw.FormDataContentType(), buf.Bytes()
	}
	ct1, body1 := mp(map[string]string{"/home/user/mp/one.txt": "one"}, "file")
	ctBad, bodyBad := mp(map[string]string{"x": "y"}, "other")
	for _, tc := range []struct {
		name, method, path string
		hdr                map[string]string
		body               []byte
		status             int
		want               string
	}{
		{"health", "GET", "/health", h, nil, 204, ""},
		{"health: no token", "GET", "/health", map[string]string{"E2b-Sandbox-Id": sb.SandboxID}, nil, 401, "X-Access-Token"},
		{"health: a key is not a token", "GET", "/health", with(map[string]string{"X-Access-Token": key}), nil, 401, "envdAccessToken"},
		{"health: forged token", "GET", "/health", with(map[string]string{"X-Access-Token": sb.EnvdAccessToken[:len(sb.EnvdAccessToken)-4] + "AAAA"}), nil, 401, "invalid"},
		{"another port", "GET", "/health", with(map[string]string{"E2b-Sandbox-Port": "8080"}), nil, 501, "49983"},
		{"upload: octet-stream", "POST", "/files?path=up/a.txt", with(map[string]string{"Content-Type": "application/octet-stream"}), []byte("AAA"), 200, `"path":"/home/user/up/a.txt"`},
		{"download", "GET", "/files?path=/home/user/up/a.txt", h, nil, 200, "AAA"},
		{"download as root", "GET", "/files?path=up/a.txt&username=root", h, nil, 404, ""}, // /root/up/a.txt
		{"upload: gzip", "POST", "/files?path=/home/user/up/z.txt", with(map[string]string{"Content-Type": "application/octet-stream", "Content-Encoding": "gzip"}), gz.Bytes(), 200, "z.txt"},
		{"download the gzip upload", "GET", "/files?path=/home/user/up/z.txt", h, nil, 200, "zipped"},
		{"upload: not gzip", "POST", "/files?path=/home/user/up/y.txt", with(map[string]string{"Content-Type": "application/octet-stream", "Content-Encoding": "gzip"}), []byte("plain"), 400, "gzip"},
		{"upload: brotli", "POST", "/files?path=/home/user/up/y.txt", with(map[string]string{"Content-Encoding": "br"}), []byte("x"), 400, "Content-Encoding"},
		{"upload: multipart, path from the part", "POST", "/files", with(map[string]string{"Content-Type": ct1}), body1, 200, `"path":"/home/user/mp/one.txt"`},
		{"upload: multipart without a file part", "POST", "/files?path=/tmp/x", with(map[string]string{"Content-Type": ctBad}), bodyBad, 400, "named file"},
		{"upload: octet-stream needs a path", "POST", "/files", with(map[string]string{"Content-Type": "application/octet-stream"}), []byte("x"), 400, "path is required"},
		{"upload: metadata", "POST", "/files?path=/home/user/m.txt", with(map[string]string{"Content-Type": "application/octet-stream", "X-Metadata-Team": "a"}), []byte("m"), 200, `"metadata":{"team":"a"}`},
		{"upload: bad metadata", "POST", "/files?path=/home/user/m.txt", with(map[string]string{"Content-Type": "application/octet-stream", "X-Metadata-Team": "caf\u00e9"}), []byte("m"), 400, "printable"},
		// As envd: root writes, then gives the file to the caller's user.
		{"upload as user where only root may write", "POST", "/files?path=/opt/newdir/x", with(map[string]string{"Content-Type": "application/octet-stream"}), []byte("x"), 200, `"path":"/opt/newdir/x"`},
		{"the user owns what it wrote (download as user)", "GET", "/files?path=/opt/newdir/x", h, nil, 200, "x"},
		{"upload: .. refused", "POST", "/files?path=/home/user/../x", with(map[string]string{"Content-Type": "application/octet-stream"}), []byte("x"), 400, ".."},
		{"download: missing", "GET", "/files?path=/nope", h, nil, 404, `"code":404`},
		{"download: a directory", "GET", "/files?path=/home/user", h, nil, 400, ""},
		{"download: no path", "GET", "/files", h, nil, 400, "path is required"},
		{"download: unknown user", "GET", "/files?path=/etc/hostname&username=bob", h, nil, 400, "unknown user"},
		{"download: unknown parameter", "GET", "/files?path=/etc/hostname&offset=3", h, nil, 400, "offset"},
		{"unknown envd path", "GET", "/process.Process/List", h, nil, 404, "no such envd endpoint"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, _, b := s.do(t, tc.method, tc.path, tc.hdr, tc.body)
			if st != tc.status || !strings.Contains(string(b), tc.want) {
				t.Fatalf("%s %s: %d %s; want %d with %q", tc.method, tc.path, st, b, tc.status, tc.want)
			}
		})
	}
	// Accept-Encoding: gzip is honoured.
	req, _ := http.NewRequest("GET", s.URL+"/files?path=/home/user/up/a.txt", nil)
	for k, v := range h {
		req.Header.Set(k, v)
	}
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := (&http.Transport{DisableCompression: true}).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	zr, err := gzip.NewReader(resp.Body)
	if err != nil || resp.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("not gzip: %v %v", err, resp.Header)
	}
	var out bytes.Buffer
	_, _ = out.ReadFrom(zr)
	if out.String() != "AAA" {
		t.Fatalf("gzip body %q", out.String())
	}
	// Once the sandbox is gone, /health says so as the SDK expects.
	if st, _, _ := s.do(t, "DELETE", "/sandboxes/"+sb.SandboxID, map[string]string{"X-API-KEY": key}, nil); st != 204 {
		t.Fatal(st)
	}
	if st, _, b := s.do(t, "GET", "/health", h, nil); st != 502 {
		t.Fatalf("health of a killed sandbox: %d %s", st, b)
	}
}

// TestEnvdRPC: the Connect procedures, unary and streaming, and their
// errors.
func TestEnvdRPC(t *testing.T) {
	s := newStack(t)
	key := s.key(t, "rpc").Key
	sb := s.create(t, key, `{"envVars":{"SBX":"yes"}}`)
	id, tok := sb.SandboxID, sb.EnvdAccessToken
	if st, b := s.unary(t, id, tok, "filesystem.Filesystem/MakeDir", `{"path":"/home/user/d"}`); st != 200 {
		t.Fatalf("%d %s", st, b)
	}
	for _, tc := range []struct {
		name, proc, msg string
		status          int
		want            string
	}{
		{"stat", "filesystem.Filesystem/Stat", `{"path":"/home/user/d"}`, 200, `"type":"FILE_TYPE_DIRECTORY"`},
		{"stat: owner", "filesystem.Filesystem/Stat", `{"path":"d"}`, 200, `"owner":"user"`},
		{"stat: missing", "filesystem.Filesystem/Stat", `{"path":"/nope"}`, 404, `"code":"not_found"`},
		{"stat: unknown field", "filesystem.Filesystem/Stat", `{"path":"/","follow":true}`, 400, `unknown field \"follow\"`},
		{"stat: no path", "filesystem.Filesystem/Stat", `{}`, 400, "path is required"},
		{"make dir: exists", "filesystem.Filesystem/MakeDir", `{"path":"/home/user/d"}`, 409, `"code":"already_exists"`},
		{"make dir: parents", "filesystem.Filesystem/MakeDir", `{"path":"/home/user/d/e/f"}`, 200, `"path":"/home/user/d/e/f"`},
		{"list: depth", "filesystem.Filesystem/ListDir", `{"path":"/home/user/d","depth":3}`, 200, `"/home/user/d/e/f"`},
		{"list: too deep", "filesystem.Filesystem/ListDir", `{"path":"/","depth":1000}`, 400, "depth"},
		{"move", "filesystem.Filesystem/Move", `{"source":"/home/user/d/e","destination":"/home/user/g/e2"}`, 200, `"path":"/home/user/g/e2"`},
		{"remove", "filesystem.Filesystem/Remove", `{"path":"/home/user/g"}`, 200, `{}`},
		{"remove: missing is removed already", "filesystem.Filesystem/Remove", `{"path":"/home/user/g"}`, 200, "{}"},
		{"remove: not as user", "filesystem.Filesystem/Remove", `{"path":"/etc/hostname"}`, 403, "permission_denied"},
		{"processes", "process.Process/List", `{}`, 200, `{"processes":[]}`},
		{"signal: no process", "process.Process/SendSignal", `{"process":{"pid":99999},"signal":"SIGNAL_SIGKILL"}`, 404, "not_found"},
		{"signal: no selector", "process.Process/SendSignal", `{"signal":"SIGNAL_SIGKILL"}`, 400, "selector"},
		{"input: no process", "process.Process/SendInput", `{"process":{"tag":"none"},"input":{"stdin":"eA=="}}`, 404, "not_found"},
		{"stream input", "process.Process/StreamInput", `{}`, 501, "unimplemented"},
		{"unknown procedure", "process.Process/Exec", `{}`, 501, "unimplemented"},
		{"watcher: unknown", "filesystem.Filesystem/GetWatcherEvents", `{"watcherId":"w_nope"}`, 404, "not_found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, b := s.unary(t, id, tok, tc.proc, tc.msg)
			if st != tc.status || !strings.Contains(string(b), tc.want) {
				t.Fatalf("%s: %d %s; want %d with %q", tc.proc, st, b, tc.status, tc.want)
			}
		})
	}
	// Wrong content type for a unary call; compressed requests.
	h := envdHeaders(id, tok)
	h["Content-Type"] = "application/proto"
	if st, _, b := s.do(t, "POST", "/filesystem.Filesystem/Stat", h, []byte(`{"path":"/"}`)); st != 400 || !contains(string(b), "JSON codec") {
		t.Fatalf("proto codec: %d %s", st, b)
	}
	h["Content-Type"], h["Content-Encoding"] = "application/json", "gzip"
	if st, _, b := s.do(t, "POST", "/filesystem.Filesystem/Stat", h, []byte(`{"path":"/"}`)); st != 501 || !contains(string(b), "compressed") {
		t.Fatalf("compressed: %d %s", st, b)
	}

	// Streams.
	type event struct {
		Event struct {
			Start *struct{ Pid int }
			Data  *struct{ Stdout, Stderr []byte }
			End   *struct {
				ExitCode int
				Exited   bool
				Status   string
				Error    *string
			}
			Keepalive *struct{}
		}
	}
	run := func(t *testing.T, msg string, extra map[string]string) ([]event, string) {
		st, msgs, end := s.streamed(t, id, tok, "process.Process/Start", msg, extra)
		if st != 200 {
			t.Fatalf("stream status %d", st)
		}
		var evs []event
		for _, m := range msgs {
			var ev event
			if err := json.Unmarshal(m, &ev); err != nil {
				t.Fatalf("%s: %v", m, err)
			}
			evs = append(evs, ev)
		}
		return evs, string(end)
	}
	t.Run("start: output and exit", func(t *testing.T) {
		evs, end := run(t, `{"process":{"cmd":"/bin/sh","args":["-c","echo $SBX $X; echo e >&2; exit 7"],"envs":{"X":"x"}}}`, nil)
		if end != "{}" || len(evs) < 3 || evs[0].Event.Start == nil || evs[0].Event.Start.Pid == 0 {
			t.Fatalf("events %+v end %s", evs, end)
		}
		var out, errOut string
		for _, ev := range evs {
			if d := ev.Event.Data; d != nil {
				out += string(d.Stdout)
				errOut += string(d.Stderr)
			}
		}
		last := evs[len(evs)-1].Event.End
		if out != "yes x\n" || errOut != "e\n" || last == nil || last.ExitCode != 7 || !last.Exited || last.Status != "exit status 7" {
			t.Fatalf("out %q err %q end %+v", out, errOut, last)
		}
	})
	t.Run("start: keepalives", func(t *testing.T) {
		evs, _ := run(t, `{"process":{"cmd":"/bin/sleep","args":["3"]}}`, map[string]string{"Keepalive-Ping-Interval": "1"})
		n := 0
		for _, ev := range evs {
			if ev.Event.Keepalive != nil {
				n++
			}
		}
		if n < 1 {
			t.Fatalf("no keepalive in %d events", len(evs))
		}
	})
	t.Run("start: the deadline ends the command", func(t *testing.T) {
		evs, _ := run(t, `{"process":{"cmd":"/bin/sleep","args":["60"]},"tag":"deadline"}`, map[string]string{"Connect-Timeout-Ms": "700"})
		last := evs[len(evs)-1].Event.End
		if last == nil || last.ExitCode != -1 || last.Exited || last.Status != "signal: killed" {
			t.Fatalf("end %+v", last)
		}
	})
	t.Run("start: a cwd that does not exist", func(t *testing.T) {
		_, end := run(t, `{"process":{"cmd":"/bin/true","cwd":"/nope"}}`, nil)
		if !contains(end, `"code":"invalid_argument"`) || !contains(end, "/nope") {
			t.Fatalf("end %s", end)
		}
	})
	t.Run("start: malformed", func(t *testing.T) {
		_, end := run(t, `{"process":{}}`, nil)
		if !contains(end, `"invalid_argument"`) {
			t.Fatalf("end %s", end)
		}
	})
	t.Run("connect to an exited process", func(t *testing.T) {
		evs, _ := run(t, `{"process":{"cmd":"/bin/true"},"tag":"done"}`, nil)
		pid := evs[0].Event.Start.Pid
		_, msgs, end := s.streamed(t, id, tok, "process.Process/Connect", `{"process":{"tag":"done"}}`, nil)
		if len(msgs) != 2 || !contains(string(msgs[0]), `"pid":`) || !contains(string(msgs[1]), `"exitCode":0`) || string(end) != "{}" {
			t.Fatalf("connect: %s %s (pid %d)", msgs, end, pid)
		}
	})
	t.Run("watch: not a directory", func(t *testing.T) {
		_, _, end := s.streamed(t, id, tok, "filesystem.Filesystem/WatchDir", `{"path":"/etc/hostname"}`, nil)
		if !contains(string(end), "not a directory") {
			t.Fatalf("end %s", end)
		}
	})
	t.Run("polling watcher", func(t *testing.T) {
		st, b := s.unary(t, id, tok, "filesystem.Filesystem/CreateWatcher", `{"path":"/home/user","recursive":true}`)
		var w struct{ WatcherID string }
		if st != 200 || json.Unmarshal(b, &w) != nil || w.WatcherID == "" {
			t.Fatalf("%d %s", st, b)
		}
		if st, b := s.unary(t, id, tok, "filesystem.Filesystem/MakeDir", `{"path":"/home/user/polled"}`); st != 200 {
			t.Fatalf("%d %s", st, b)
		}
		var got string
		for i := 0; i < 500 && !contains(got, "polled"); i++ {
			_, b := s.unary(t, id, tok, "filesystem.Filesystem/GetWatcherEvents", `{"watcherId":"`+w.WatcherID+`"}`)
			got += strings.ReplaceAll(string(b), `{"events":[]}`, "")
			time.Sleep(20 * time.Millisecond)
		}
		if !contains(got, `"name":"polled","type":"EVENT_TYPE_CREATE"`) {
			t.Fatalf("events %s", got)
		}
		if st, b := s.unary(t, id, tok, "filesystem.Filesystem/RemoveWatcher", `{"watcherId":"`+w.WatcherID+`"}`); st != 200 {
			t.Fatalf("%d %s", st, b)
		}
		if st, _ := s.unary(t, id, tok, "filesystem.Filesystem/GetWatcherEvents", `{"watcherId":"`+w.WatcherID+`"}`); st != 404 {
			t.Fatalf("a removed watcher answers %d", st)
		}
	})
	// A token carries the key's scopes: a key without exec gets a token
	// that cannot start processes, but reads files.
	t.Run("token scopes", func(t *testing.T) {
		rw := s.key(t, "rpc", auth.ScopeRead, auth.ScopeWrite).Key
		c := s.create(t, rw, `{}`)
		_, _, end := s.streamed(t, c.SandboxID, c.EnvdAccessToken, "process.Process/Start", `{"process":{"cmd":"/bin/true"}}`, nil)
		if !contains(string(end), "permission_denied") {
			t.Fatalf("start without exec: %s", end)
		}
		if st, b := s.unary(t, c.SandboxID, c.EnvdAccessToken, "filesystem.Filesystem/Stat", `{"path":"/"}`); st != 200 {
			t.Fatalf("stat: %d %s", st, b)
		}
	})
}
