package api_test

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/audit"
	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/internal/testenv"
)

// fileReply is an answer of the files API.
type fileReply struct {
	status int
	header http.Header
	body   string
	code   string // error code, if any
}

func filesDo(t testing.TB, e *testenv.Env, method, rawPath string, body io.Reader, hdr ...string) fileReply {
	t.Helper()
	req, err := http.NewRequest(method, e.Server.URL+rawPath, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+e.AdminKey)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, rawPath, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var eb api.ErrorBody
	_ = json.Unmarshal(b, &eb)
	return fileReply{status: resp.StatusCode, header: resp.Header, body: string(b), code: eb.Error.Code}
}

func fpath(id, sub string, kv ...string) string {
	q := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		q.Set(kv[i], kv[i+1])
	}
	p := "/v1/sandboxes/" + id + "/files" + sub
	if len(q) > 0 {
		p += "?" + q.Encode()
	}
	return p
}

func decodeInto(t testing.TB, r fileReply, v any) {
	t.Helper()
	if r.status != 200 {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	if err := json.Unmarshal([]byte(r.body), v); err != nil {
		t.Fatalf("decode %q: %v", r.body, err)
	}
}

func sh(t testing.TB, e *testenv.Env, id, script string) string {
	t.Helper()
	res := e.Sh(id, script)
	if res.ExitCode != 0 {
		t.Fatalf("sh %q: exit %d: %s%s", script, res.ExitCode, res.Stdout, res.Stderr)
	}
	return res.Stdout
}

// TestFilesRoundTrip drives every operation of the files API through REST.
func TestFilesRoundTrip(t *testing.T) {
	e := testenv.New(t, testenv.Options{})
	sb := e.Create(sandbox.Spec{})
	id := sb.ID

	// write (raw body), read whole, offset/length and Range.
	r := filesDo(t, e, "PUT", fpath(id, "", "path", "notes/a.txt", "parents", "true", "mode", "0640"), strings.NewReader("hello, world\n"))
	var fi client.FileInfo
	decodeInto(t, r, &fi)
	if fi.Path != "/workspace/notes/a.txt" || fi.Size != 13 || fi.Mode != "0640" || fi.Type != "file" {
		t.Fatalf("write answer %+v", fi)
	}
	if out := sh(t, e, id, "cat /workspace/notes/a.txt; stat -c %a /workspace/notes/a.txt"); out != "hello, world\n640\n" {
		t.Fatalf("in the sandbox: %q", out)
	}
	r = filesDo(t, e, "GET", fpath(id, "", "path", "/workspace/notes/a.txt"), nil)
	if r.status != 200 || r.body != "hello, world\n" || r.header.Get("X-Paddock-Size") != "13" || r.header.Get("Content-Length") != "13" {
		t.Fatalf("read: %d %q %v", r.status, r.body, r.header)
	}
	r = filesDo(t, e, "GET", fpath(id, "", "path", "notes/a.txt", "offset", "7", "length", "5"), nil)
	if r.status != 200 || r.body != "world" {
		t.Fatalf("offset/length: %d %q", r.status, r.body)
	}
	r = filesDo(t, e, "GET", fpath(id, "", "path", "notes/a.txt"), nil, "Range", "bytes=0-4")
	if r.status != 206 || r.body != "hello" || r.header.Get("Content-Range") != "bytes 0-4/13" {
		t.Fatalf("range: %d %q %q", r.status, r.body, r.header.Get("Content-Range"))
	}
	r = filesDo(t, e, "GET", fpath(id, "", "path", "notes/a.txt"), nil, "Range", "bytes=-6")
	if r.status != 206 || r.body != "world\n" {
		t.Fatalf("suffix range: %d %q", r.status, r.body)
	}

	// stat, mkdir, list.
	decodeInto(t, filesDo(t, e, "GET", fpath(id, "/stat", "path", "notes"), nil), &fi)
	if fi.Type != "dir" || fi.Name != "notes" {
		t.Fatalf("stat %+v", fi)
	}
	r = filesDo(t, e, "POST", fpath(id, "/mkdir"), strings.NewReader(`{"path":"/workspace/x/y/z","parents":true}`))
	decodeInto(t, r, &fi)
	sh(t, e, id, "ln -s /etc/hostname /workspace/x/link")
	var lr client.ListResult
	decodeInto(t, filesDo(t, e, "GET", fpath(id, "/list", "path", "/workspace", "depth", "3"), nil), &lr)
	var got []string
	for _, en := range lr.Entries {
		got = append(got, strings.TrimPrefix(en.Path, "/workspace/")+":"+en.Type+":"+en.Target)
	}
	if strings.Join(got, " ") != "notes:dir: notes/a.txt:file: x:dir: x/link:symlink:/etc/hostname x/y:dir: x/y/z:dir:" {
		t.Fatalf("list = %v", got)
	}

	// move, edit (string and lines).
	r = filesDo(t, e, "POST", fpath(id, "/move"), strings.NewReader(`{"from":"notes/a.txt","to":"x/b.txt"}`))
	decodeInto(t, r, &fi)
	r = filesDo(t, e, "POST", fpath(id, "/edit"), strings.NewReader(`{"path":"x/b.txt","old_string":"world","new_string":"sandbox"}`))
	var er client.EditResult
	decodeInto(t, r, &er)
	if er.Replacements != 1 || er.File.Mode != "0640" {
		t.Fatalf("edit %+v", er)
	}
	r = filesDo(t, e, "POST", fpath(id, "/edit"), strings.NewReader(`{"path":"x/b.txt","start_line":1,"end_line":0,"content":"first"}`))
	decodeInto(t, r, &er)
	if out := sh(t, e, id, "cat /workspace/x/b.txt"); out != "first\nhello, sandbox\n" {
		t.Fatalf("after edits %q", out)
	}
	r = filesDo(t, e, "POST", fpath(id, "/edit"), strings.NewReader(`{"path":"x/b.txt","old_string":"l","new_string":"L"}`))
	if r.status != 409 || !strings.Contains(r.body, "occurs 2 times") {
		t.Fatalf("ambiguous edit: %d %s", r.status, r.body)
	}

	// find and search.
	var fr client.FindResult
	decodeInto(t, filesDo(t, e, "GET", fpath(id, "/find", "pattern", "**/*.txt"), nil), &fr)
	if len(fr.Matches) != 1 || fr.Matches[0].Path != "/workspace/x/b.txt" {
		t.Fatalf("find %+v", fr)
	}
	var sr client.SearchResult
	decodeInto(t, filesDo(t, e, "GET", fpath(id, "/search", "query", "SANDBOX", "ignore_case", "true"), nil), &sr)
	if len(sr.Matches) != 1 || sr.Matches[0].Line != 2 || sr.Matches[0].Text != "hello, sandbox" {
		t.Fatalf("search %+v", sr)
	}

	// archive download, then upload elsewhere; the trees match.
	r = filesDo(t, e, "GET", fpath(id, "/archive", "path", "/workspace/x", "gzip", "true"), nil)
	if r.status != 200 || r.header.Get("Content-Type") != "application/gzip" {
		t.Fatalf("archive: %d %s", r.status, r.body)
	}
	var xr client.ExtractResult
	decodeInto(t, filesDo(t, e, "POST", fpath(id, "/archive", "path", "/tmp/copy"), strings.NewReader(r.body)), &xr)
	if xr.Files != 1 || xr.Symlinks != 1 || xr.Dirs != 2 {
		t.Fatalf("extract %+v", xr)
	}
	if out := sh(t, e, id, "cd /tmp/copy && find . | sort && readlink link && cat b.txt"); out != ".\n./b.txt\n./link\n./y\n./y/z\n/etc/hostname\nfirst\nhello, sandbox\n" {
		t.Fatalf("extracted tree %q", out)
	}

	// watch: the stream reports a file created after "ready".
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w, err := e.Client.WatchFiles(ctx, id, client.WatchRequest{Path: "/workspace", Recursive: true})
	if err != nil {
		t.Fatal(err)
	}
	if ev, err := w.Next(); err != nil || ev.Type != "ready" {
		t.Fatalf("first watch event %+v %v", ev, err)
	}
	sh(t, e, id, "mkdir /workspace/w && echo hi > /workspace/w/new")
	for {
		ev, err := w.Next()
		if err != nil {
			t.Fatalf("watch: %v", err)
		}
		if ev.Type == "create" && ev.Path == "/workspace/w/new" {
			break
		}
	}
	w.Close()

	// as user: owned by uid 1000; a root-only directory is refused.
	r = filesDo(t, e, "PUT", fpath(id, "", "path", "/home/user/mine", "user", "user"), strings.NewReader("x"))
	decodeInto(t, r, &fi)
	if fi.UID != 1000 || sh(t, e, id, "stat -c %u:%g /home/user/mine") != "1000:1000\n" {
		t.Fatalf("user write %+v", fi)
	}
	r = filesDo(t, e, "PUT", fpath(id, "", "path", "/root/nope", "user", "user"), strings.NewReader("x"))
	if r.status != 403 || r.code != "forbidden" {
		t.Fatalf("user write into /root: %d %s", r.status, r.body)
	}

	// remove: a directory needs recursive.
	r = filesDo(t, e, "DELETE", fpath(id, "", "path", "x"), nil)
	if r.status != 409 || !strings.Contains(r.body, "recursive") {
		t.Fatalf("remove non-empty: %d %s", r.status, r.body)
	}
	var rr client.RemoveResult
	decodeInto(t, filesDo(t, e, "DELETE", fpath(id, "", "path", "x", "recursive", "true"), nil), &rr)
	if rr.Removed != 5 || sh(t, e, id, "ls /workspace") != "notes\nw\n" {
		t.Fatalf("remove %+v", rr)
	}
	// /proc files have no size; they are read to their end.
	r = filesDo(t, e, "GET", fpath(id, "", "path", "/proc/self/status"), nil)
	if r.status != 403 {
		t.Fatalf("the agent's own /proc: %d %s", r.status, r.body)
	}
	r = filesDo(t, e, "GET", fpath(id, "", "path", "/proc/cpuinfo"), nil)
	if r.status != 200 || !strings.Contains(r.body, "processor") {
		t.Fatalf("/proc/cpuinfo: %d %q", r.status, clip(r.body))
	}
}

// TestFilesGoClient exercises the Go client's file methods.
func TestFilesGoClient(t *testing.T) {
	e := testenv.New(t, testenv.Options{})
	id := e.Create(sandbox.Spec{}).ID
	ctx := context.Background()
	c := e.Client
	if _, err := c.WriteFile(ctx, id, client.WriteRequest{Path: "g.txt"}, strings.NewReader("0123456789"), 10); err != nil {
		t.Fatal(err)
	}
	if b, err := c.ReadFile(ctx, id, "g.txt"); err != nil || string(b) != "0123456789" {
		t.Fatalf("read %q %v", b, err)
	}
	f, err := c.OpenFile(ctx, id, client.ReadFileRequest{Path: "g.txt", Suffix: 3})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(f.Body)
	f.Body.Close()
	if string(b) != "789" || f.Size != 10 || f.Offset != 7 {
		t.Fatalf("suffix: %q %+v", b, f)
	}
	_, err = c.OpenFile(ctx, id, client.ReadFileRequest{Path: "g.txt", Offset: 11})
	var ce *client.Error
	if !errorsAs(err, &ce) || ce.Status != 416 {
		t.Fatalf("past end: %v", err)
	}
	if _, err := c.MakeDir(ctx, id, client.MkdirRequest{Path: "d", Parents: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.MoveFile(ctx, id, client.MoveRequest{From: "g.txt", To: "d/g.txt"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.EditFile(ctx, id, client.EditRequest{Path: "d/g.txt", OldString: "345", NewString: "-"}); err != nil {
		t.Fatal(err)
	}
	if fi, err := c.StatFile(ctx, id, client.StatRequest{Path: "d/g.txt"}); err != nil || fi.Size != 8 {
		t.Fatalf("stat %+v %v", fi, err)
	}
	if l, err := c.ListFiles(ctx, id, client.ListRequest{Path: "d"}); err != nil || len(l.Entries) != 1 {
		t.Fatalf("list %+v %v", l, err)
	}
	if fr, err := c.FindFiles(ctx, id, client.FindRequest{Pattern: "**/g.*"}); err != nil || len(fr.Matches) != 1 {
		t.Fatalf("find %+v %v", fr, err)
	}
	if sr, err := c.SearchFiles(ctx, id, client.SearchRequest{Query: `0\d2`, Regexp: true}); err != nil || len(sr.Matches) != 1 {
		t.Fatalf("search %+v %v", sr, err)
	}
	arc, err := c.DownloadArchive(ctx, id, client.ArchiveRequest{Path: "d"})
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(arc)
	arc.Close()
	if _, err := c.UploadArchive(ctx, id, client.ExtractRequest{Path: "d2"}, bytes.NewReader(data), int64(len(data))); err != nil {
		t.Fatal(err)
	}
	if b, err := c.ReadFile(ctx, id, "d2/g.txt"); err != nil || string(b) != "012-6789" {
		t.Fatalf("after archive round trip %q %v", b, err)
	}
	if rr, err := c.RemoveFile(ctx, id, client.RemoveRequest{Path: "d2", Recursive: true}); err != nil || rr.Removed != 2 {
		t.Fatalf("remove %+v %v", rr, err)
	}
	if _, err := c.StatFile(ctx, id, client.StatRequest{Path: "d2"}); !client.IsNotFound(err) {
		t.Fatalf("after remove: %v", err)
	}
}

func errorsAs(err error, target **client.Error) bool {
	e, ok := err.(*client.Error)
	if ok {
		*target = e
	}
	return ok
}

// TestFilesBadInput: each bad request gets a clear error with a stable
// code, and the server and sandbox keep working.
func TestFilesBadInput(t *testing.T) {
	e := testenv.New(t, testenv.Options{})
	id := e.Create(sandbox.Spec{}).ID
	filesDo(t, e, "PUT", fpath(id, "", "path", "f"), strings.NewReader("0123456789"))
	sh(t, e, id, "mkfifo /workspace/fifo")
	base := "/v1/sandboxes/" + id + "/files"
	long := strings.Repeat("n", 256)
	cases := []struct {
		name, method, raw string
		body              string
		hdr               []string
		status            int
		code, inMessage   string
	}{
		{"dotdot", "GET", base + "?path=../etc/passwd", "", nil, 400, "invalid_argument", "component"},
		{"encoded dotdot", "GET", base + "?path=%2e%2e%2fetc%2fpasswd", "", nil, 400, "invalid_argument", "component"},
		{"encoded dotdot mid-path", "GET", base + "?path=/workspace/%2E%2E/etc/passwd", "", nil, 400, "invalid_argument", "component"},
		{"encoded NUL", "GET", base + "?path=/etc/passwd%00.txt", "", nil, 400, "invalid_argument", "NUL"},
		{"bad escape", "GET", base + "?path=%zz", "", nil, 400, "invalid_argument", "malformed query"},
		{"double-encoded is a name", "GET", base + "?path=%252e%252e", "", nil, 404, "not_found", "%2e%2e"},
		{"empty path", "GET", base + "?path=", "", nil, 400, "invalid_argument", "empty"},
		{"long name", "GET", base + "?path=/" + long, "", nil, 400, "invalid_argument", "255"},
		{"long path", "GET", base + "?path=" + strings.Repeat("/aa", 1400), "", nil, 400, "invalid_argument", "4096"},
		{"unknown parameter", "DELETE", base + "?path=f&recursiv=true", "", nil, 400, "invalid_argument", "recursiv"},
		{"repeated parameter", "GET", base + "?path=f&path=g", "", nil, 400, "invalid_argument", "more than once"},
		{"bad integer", "GET", base + "?path=f&offset=x", "", nil, 400, "invalid_argument", "offset"},
		{"negative offset", "GET", base + "?path=f&offset=-1", "", nil, 400, "invalid_argument", "negative"},
		{"zero length", "GET", base + "?path=f&length=0", "", nil, 400, "invalid_argument", "length"},
		{"offset past end", "GET", base + "?path=f&offset=11", "", nil, 416, "invalid_argument", "past the end"},
		{"range past end", "GET", base + "?path=f", "", []string{"Range", "bytes=10-20"}, 416, "invalid_argument", "past"},
		{"multi range", "GET", base + "?path=f", "", []string{"Range", "bytes=0-1,3-4"}, 400, "invalid_argument", "single byte range"},
		{"range and offset", "GET", base + "?path=f&offset=1", "", []string{"Range", "bytes=0-1"}, 400, "invalid_argument", "not both"},
		{"missing", "GET", base + "?path=/nope", "", nil, 404, "not_found", "/nope"},
		{"directory", "GET", base + "?path=/workspace", "", nil, 400, "invalid_argument", "directory"},
		{"device", "GET", base + "?path=/dev/zero", "", nil, 400, "invalid_argument", "character device"},
		{"fifo", "GET", base + "?path=fifo", "", nil, 400, "invalid_argument", "FIFO"},
		{"search a fifo", "GET", base + "/search?path=fifo&query=x", "", nil, 400, "invalid_argument", "FIFO"},
		{"edit a fifo", "POST", base + "/edit", `{"path":"fifo","old_string":"x"}`, nil, 400, "invalid_argument", "FIFO"},
		{"archive a fifo", "GET", base + "/archive?path=fifo", "", nil, 400, "invalid_argument", "FIFO"},
		{"unknown user", "GET", base + "?path=f&user=admin", "", nil, 400, "invalid_argument", "user"},
		{"setuid mode", "PUT", base + "?path=s&mode=4755", "x", nil, 400, "invalid_argument", "setuid"},
		{"write /proc", "PUT", base + "?path=/proc/sys/kernel/hostname", "evil", nil, 403, "forbidden", "read-only"},
		{"write /proc/self", "PUT", base + "?path=/proc/self/attr/current", "evil", nil, 403, "forbidden", ""},
		{"write /proc/sysrq-trigger", "PUT", base + "?path=/proc/sysrq-trigger", "b", nil, 403, "forbidden", "read-only"},
		{"write onto a directory", "PUT", base + "?path=/workspace", "x", nil, 400, "invalid_argument", "directory"},
		{"remove /", "DELETE", base + "?path=/&recursive=true", "", nil, 400, "invalid_argument", "refusing"},
		{"mkdir unknown field", "POST", base + "/mkdir", `{"path":"a","parnets":true}`, nil, 400, "invalid_argument", "parnets"},
		{"move missing", "POST", base + "/move", `{"from":"nope","to":"f2"}`, nil, 404, "not_found", "nope"},
		{"move onto existing", "POST", base + "/move", `{"from":"f","to":"/workspace"}`, nil, 409, "conflict", "overwrite"},
		{"edit nothing", "POST", base + "/edit", `{"path":"f"}`, nil, 400, "invalid_argument", "old_string"},
		{"find without pattern", "GET", base + "/find", "", nil, 400, "invalid_argument", "pattern"},
		{"find absolute pattern", "GET", base + "/find?pattern=/etc/*", "", nil, 400, "invalid_argument", "relative"},
		{"search bad regexp", "GET", base + "/search?query=(&regexp=true", "", nil, 400, "invalid_argument", "regular expression"},
		{"archive not tar", "POST", base + "/archive?path=/tmp/t", "this is not a tar archive", nil, 400, "invalid_argument", "tar"},
		{"no such sandbox", "GET", "/v1/sandboxes/sb-aaaaaaaaaaaaaaaaaaaaaaaaaa/files?path=f", "", nil, 404, "not_found", "sandbox"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var body io.Reader
			if tc.body != "" {
				body = strings.NewReader(tc.body)
			}
			r := filesDo(t, e, tc.method, tc.raw, body, tc.hdr...)
			if r.status != tc.status || r.code != tc.code || !strings.Contains(r.body, tc.inMessage) {
				t.Fatalf("%s %s: %d %s, want %d %s mentioning %q", tc.method, tc.raw[:min(len(tc.raw), 120)], r.status, clip(r.body), tc.status, tc.code, tc.inMessage)
			}
			if tc.status == 416 && r.header.Get("Content-Range") != "bytes */10" {
				t.Errorf("Content-Range = %q", r.header.Get("Content-Range"))
			}
		})
	}
	// Nothing escaped into the sandbox's /etc or the host; the sandbox
	// still answers; the hostname is untouched.
	if out := sh(t, e, id, "cat /proc/sys/kernel/hostname; cat /workspace/f; ls /workspace"); out != id+"\n0123456789f\nfifo\n" {
		t.Fatalf("after bad input: %q", out)
	}
}

// TestFilesSymlinkToHost: a symlink inside the sandbox to a host path
// reaches the sandbox's file of that name (or nothing), never the host's.
// Positive control: the same symlink made on the host, followed natively,
// reads the host's secret.
func TestFilesSymlinkToHost(t *testing.T) {
	e := testenv.New(t, testenv.Options{})
	id := e.Create(sandbox.Spec{}).ID
	hostDir, err := os.MkdirTemp("", "pdk-host-secret-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(hostDir)
	secret := filepath.Join(hostDir, "secret")
	if err := os.WriteFile(secret, []byte("HOST SECRET"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Positive control.
	native := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(secret, native); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(native); err != nil || string(b) != "HOST SECRET" {
		t.Fatalf("positive control: %q %v", b, err)
	}
	hostShadow, _ := os.ReadFile("/etc/shadow")

	sh(t, e, id, "ln -s "+secret+" /workspace/to-host && ln -s /etc/shadow /workspace/to-shadow && ln -s "+hostDir+" /workspace/to-dir")
	r := filesDo(t, e, "GET", fpath(id, "", "path", "to-host"), nil)
	if r.status != 404 || strings.Contains(r.body, "HOST SECRET") {
		t.Fatalf("read through a symlink to a host file: %d %q", r.status, r.body)
	}
	r = filesDo(t, e, "GET", fpath(id, "", "path", "to-shadow"), nil)
	if len(hostShadow) > 0 && r.body == string(hostShadow) {
		t.Fatal("read the host's /etc/shadow")
	}
	// Writing through the link creates the sandbox's file, not the host's.
	r = filesDo(t, e, "PUT", fpath(id, "", "path", "to-dir/planted", "parents", "true"), strings.NewReader("x"))
	if _, err := os.Stat(filepath.Join(hostDir, "planted")); err == nil {
		t.Fatal("a write through a symlink landed on the host")
	}
	for _, p := range []string{"to-host", "to-dir"} {
		r = filesDo(t, e, "GET", fpath(id, "/list", "path", p), nil)
		if strings.Contains(r.body, "secret") {
			t.Fatalf("list through %s showed the host directory: %s", p, r.body)
		}
	}
	// The archive of a tree holding the links stores links, not targets.
	r = filesDo(t, e, "GET", fpath(id, "/archive", "path", "/workspace"), nil)
	if strings.Contains(r.body, "HOST SECRET") {
		t.Fatal("the archive carried the host's secret")
	}
	// Magic links of /proc are not followed.
	r = filesDo(t, e, "GET", fpath(id, "", "path", "/proc/1/root/etc/hostname"), nil)
	if r.status == 200 {
		t.Fatalf("read through /proc/1/root: %q", r.body)
	}
}

// TestFilesArchiveEscapes: hostile archives uploaded through REST are
// refused and create nothing outside the target, in the sandbox or on the
// host. Positive control: GNU tar -P extracts them on the host and does
// reach outside.
func TestFilesArchiveEscapes(t *testing.T) {
	e := testenv.New(t, testenv.Options{})
	id := e.Create(sandbox.Spec{})
	hostOut, err := os.MkdirTemp("", "pdk-host-out-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(hostOut)
	sh(t, e, id.ID, "mkdir -p /workspace/target /workspace/outside "+hostOut)
	for _, tc := range []struct {
		name    string
		entries []tarEntry
	}{
		{"dotdot", []tarEntry{{name: "../outside/dd"}}},
		{"absolute sandbox path", []tarEntry{{name: "/workspace/outside/abs"}}},
		{"absolute host path", []tarEntry{{name: hostOut + "/abs"}}},
		{"symlink then file", []tarEntry{{name: "l", link: "../outside", typ: tar.TypeSymlink}, {name: "l/viarel"}}},
		{"symlink to host then file", []tarEntry{{name: "h", link: hostOut, typ: tar.TypeSymlink}, {name: "h/viahost"}}},
		{"hardlink out", []tarEntry{{name: "hl", link: "../outside/x", typ: tar.TypeLink}}},
		{"device node", []tarEntry{{name: "dev", typ: tar.TypeBlock}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := buildTar(t, tc.entries)
			r := filesDo(t, e, "POST", fpath(id.ID, "/archive", "path", "/workspace/target"), bytes.NewReader(data))
			if r.status != 400 || r.code != "invalid_argument" {
				t.Fatalf("%d %s", r.status, r.body)
			}
			if out := sh(t, e, id.ID, "ls -A /workspace/outside "+hostOut); strings.TrimSpace(strings.ReplaceAll(out, hostOut+":", "")) != "/workspace/outside:" {
				t.Fatalf("something appeared outside the target: %q", out)
			}
			if ents, _ := os.ReadDir(hostOut); len(ents) != 0 {
				t.Fatalf("something appeared on the host: %v", ents)
			}
		})
	}
	// Positive control on the host: tar -xP writes through the symlink.
	base := t.TempDir()
	os.MkdirAll(filepath.Join(base, "target"), 0o755)
	os.MkdirAll(filepath.Join(base, "outside"), 0o755)
	cmd := exec.Command("tar", "-xPf", "-", "-C", filepath.Join(base, "target"))
	cmd.Stdin = bytes.NewReader(buildTar(t, []tarEntry{{name: "l", link: "../outside", typ: tar.TypeSymlink}, {name: "l/viarel"}, {name: "../outside/dd"}}))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("positive control: %v %s", err, out)
	}
	for _, n := range []string{"viarel", "dd"} {
		if _, err := os.Stat(filepath.Join(base, "outside", n)); err != nil {
			t.Fatalf("positive control: native tar did not create outside/%s", n)
		}
	}
}

type tarEntry struct {
	name, link string
	typ        byte
}

func buildTar(t testing.TB, entries []tarEntry) []byte {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, en := range entries {
		typ := en.typ
		if typ == 0 {
			typ = tar.TypeReg
		}
		h := &tar.Header{Name: en.name, Linkname: en.link, Typeflag: typ, Mode: 0o644, Format: tar.FormatPAX}
		if typ == tar.TypeReg {
			h.Size = 1
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if typ == tar.TypeReg {
			tw.Write([]byte("x"))
		}
	}
	tw.Close()
	return buf.Bytes()
}

// TestFilesDiskFull: an upload larger than the sandbox's disk fails with a
// clear error and leaves neither a partial file nor a temporary one; an
// existing file keeps its content.
func TestFilesDiskFull(t *testing.T) {
	e := testenv.New(t, testenv.Options{})
	id := e.Create(sandbox.Spec{DiskMB: 16}).ID
	filesDo(t, e, "PUT", fpath(id, "", "path", "keep"), strings.NewReader("precious"))
	for _, target := range []string{"big", "keep"} {
		r := filesDo(t, e, "PUT", fpath(id, "", "path", target), io.LimitReader(zeroReader{}, 64<<20))
		if r.status != 413 || r.code != "too_large" || !strings.Contains(r.body, "disk is full") {
			t.Fatalf("upload over the disk: %d %s", r.status, r.body)
		}
	}
	if out := sh(t, e, id, "ls -A /workspace; cat /workspace/keep"); out != "keep\nprecious" {
		t.Fatalf("after the full disk: %q", out)
	}
	// The disk is usable again: nothing was left holding the space.
	if r := filesDo(t, e, "PUT", fpath(id, "", "path", "small"), io.LimitReader(zeroReader{}, 4<<20)); r.status != 200 {
		t.Fatalf("after the failure: %d %s", r.status, r.body)
	}
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// TestFilesClientDisconnect: clients that go away mid-upload, mid-download
// or mid-watch leave the server and the sandbox healthy and no partial
// file behind.
func TestFilesClientDisconnect(t *testing.T) {
	e := testenv.New(t, testenv.Options{})
	id := e.Create(sandbox.Spec{DiskMB: 256, MemoryMB: 512}).ID
	// Upload: the body stops after 8 MiB and the client gives up.
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	go func() {
		pw.Write(make([]byte, 8<<20))
		cancel()
		pw.CloseWithError(context.Canceled)
	}()
	_, err := e.Client.WriteFile(ctx, id, client.WriteRequest{Path: "partial"}, pr, 64<<20)
	if err == nil {
		t.Fatal("an interrupted upload succeeded")
	}
	// Download: read a little of 32 MiB, then hang up.
	filesDo(t, e, "PUT", fpath(id, "", "path", "big"), io.LimitReader(zeroReader{}, 32<<20))
	f, err := e.Client.OpenFile(context.Background(), id, client.ReadFileRequest{Path: "big"})
	if err != nil {
		t.Fatal(err)
	}
	io.CopyN(io.Discard, f.Body, 1<<20)
	f.Body.Close()
	// Watch: open and drop.
	wctx, wcancel := context.WithCancel(context.Background())
	w, err := e.Client.WatchFiles(wctx, id, client.WatchRequest{Path: "/workspace"})
	if err != nil {
		t.Fatal(err)
	}
	w.Next()
	wcancel()
	w.Close()

	// Healthy: the server answers, the sandbox works, no partial file, and
	// new watches open (the dropped one released its slot).
	if resp, err := http.Get(e.Server.URL + "/healthz"); err != nil || resp.StatusCode != 200 {
		t.Fatalf("healthz: %v", err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		out := sh(t, e, id, "ls -A /workspace")
		if out == "big\n" {
			break
		}
		if time.Now().After(deadline) { // the guest notices the hang-up asynchronously
			t.Fatalf("workspace after disconnects: %q", out)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// More watches than the sandbox's limit (16), one after another: each
	// closed one gives its slot back (the hang-up reaches the agent
	// asynchronously, so an open may have to wait for it).
	for i := 0; i < 40; i++ {
		guard := time.Now().Add(30 * time.Second)
		for {
			w, err := e.Client.WatchFiles(context.Background(), id, client.WatchRequest{Path: "/workspace"})
			if err == nil {
				w.Next()
				w.Close()
				break
			}
			if time.Now().After(guard) {
				t.Fatalf("watch %d after dropped ones: %v", i, err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	if b, err := e.Client.ReadFile(context.Background(), id, "big"); err != nil || len(b) != 32<<20 {
		t.Fatalf("read after disconnects: %d %v", len(b), err)
	}
}

// TestFilesScopes: a read-only key reads but cannot write.
func TestFilesScopes(t *testing.T) {
	e := testenv.New(t, testenv.Options{})
	id := e.Create(sandbox.Spec{}).ID
	filesDo(t, e, "PUT", fpath(id, "", "path", "f"), strings.NewReader("x"))
	key, err := e.Auth.CreateKey(context.Background(), e.Scope, authKeyRequest("read"))
	if err != nil {
		t.Fatal(err)
	}
	ro := client.New(e.Server.URL, key.Key)
	if b, err := ro.ReadFile(context.Background(), id, "f"); err != nil || string(b) != "x" {
		t.Fatalf("read with a read key: %q %v", b, err)
	}
	_, err = ro.WriteFile(context.Background(), id, client.WriteRequest{Path: "g"}, strings.NewReader("y"), 1)
	if ce, ok := err.(*client.Error); !ok || ce.Status != 403 {
		t.Fatalf("write with a read key: %v", err)
	}
	if _, err := ro.RemoveFile(context.Background(), id, client.RemoveRequest{Path: "f"}); err == nil {
		t.Fatal("remove with a read key succeeded")
	}
}

func authKeyRequest(scope string) auth.KeyRequest {
	return auth.KeyRequest{Tenant: auth.DefaultTenant, Scopes: []auth.Scope{auth.Scope(scope)}, Name: "files-test"}
}

// TestFilesAudit: file operations are recorded, intent before result; a
// refused hostile upload is recorded with its error; a streamed read's
// result carries the bytes sent.
func TestFilesAudit(t *testing.T) {
	e := testenv.New(t, testenv.Options{})
	id := e.Create(sandbox.Spec{}).ID
	filesDo(t, e, "PUT", fpath(id, "", "path", "a"), strings.NewReader("12345"))
	filesDo(t, e, "GET", fpath(id, "", "path", "a"), nil)
	filesDo(t, e, "POST", fpath(id, "/archive", "path", "t"), bytes.NewReader(buildTar(t, []tarEntry{{name: "../escape"}})))
	filesDo(t, e, "DELETE", fpath(id, "", "path", "a"), nil)
	recs := e.AuditRecords(audit.Query{Sandbox: id, Action: "file."})
	var seen []string
	for _, r := range recs {
		seen = append(seen, r.Action+"/"+r.Phase)
		switch {
		case r.Action == "file.read" && r.Phase == "result" && !strings.Contains(string(r.Result)+string(r.Args), `"bytes":5`):
			t.Errorf("read result without its byte count: %s %s", r.Args, r.Result)
		case r.Action == "file.archive.upload" && r.Phase == "result" && !strings.Contains(r.Error, ".."):
			t.Errorf("refused upload recorded without its error: %+v", r)
		}
	}
	want := "file.write/intent file.write/result file.read/intent file.read/result file.archive.upload/intent file.archive.upload/result file.remove/intent file.remove/result"
	if got := strings.Join(seen, " "); got != want {
		t.Fatalf("audit records:\n%s\nwant:\n%s", got, want)
	}
}
