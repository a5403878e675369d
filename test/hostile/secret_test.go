//go:build linux

package hostile

// Secret injection (docs/network.md, "Secrets"): a secret lives in the
// control plane and the egress proxy adds it to the sandbox's HTTPS
// requests to the one host (and port) of its rule. The sandbox must never
// see it, and no other destination may get it. The cases run in the
// server lab (serverlab_test.go): a real `paddock serve`, its sandboxes
// and the outside servers, which record everything they are sent.

import (
	"bytes"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/audit"
	"golang.org/x/sys/unix"
)

const (
	// curlT ignores the proxy variables (the transparent path: the kernel
	// sends it to the proxy); curlX honours HTTPS_PROXY (the explicit path).
	curlT = "curl -sS -m 10 --noproxy '*' "
	curlX = "curl -sS -m 10 "
	// injectTemplate is the rule's value: the secret named API_TOKEN.
	injectTemplate = "Bearer {secret:API_TOKEN}"
)

// injectSpec is a sandbox that reaches api.test and other.test, with a
// rule that gives api.test:443 the secret API_TOKEN as Authorization, and
// one for api.test:8080, where the server speaks cleartext HTTP.
func injectSpec() client.Spec {
	return client.Spec{Network: &client.Network{Mode: "allowlist", Allow: []string{"api.test", "other.test"},
		Inject: []client.InjectRule{{Host: "api.test", Header: "Authorization", Value: injectTemplate},
			{Host: "api.test:8080", Header: "X-Api-Key", Value: "{secret:API_TOKEN}"}}}}
}

// injectHosts are the hosts API_TOKEN is bound to: those of injectSpec's
// rules.
var injectHosts = []string{"api.test", "api.test:8080"}

// secretSandbox stores value as the admin tenant's API_TOKEN, bound to
// injectHosts, and creates a sandbox whose rule injects it for api.test.
func (l *srvLab) secretSandbox(value string) string {
	l.t.Helper()
	if _, err := l.c.SetSecret(ctxT(l.t, time.Minute), "", "API_TOKEN", value, injectHosts...); err != nil {
		l.t.Fatalf("set the secret: %v", err)
	}
	want := "Bearer " + value
	l.wantAuth.Store(&want)
	return l.create(injectSpec())
}

// injected is the in-sandbox positive control: a request to api.test
// arrives upstream with the secret (the injection works, so the secret
// is right there on the wire just outside the sandbox).
func (l *srvLab) injected(id, value string) { l.injectedAs(l.c, id, value) }

func (l *srvLab) injectedAs(cl *client.Client, id, value string) {
	l.t.Helper()
	for _, c := range []string{curlT, curlX} {
		res := l.shAs(cl, id, c+"https://api.test/injected")
		if res.ExitCode != 0 || !strings.Contains(res.Stdout, "api.test:443 tls=true authorized") {
			l.t.Fatalf("positive control: %shttps://api.test/ from the sandbox: %+v", c, res)
		}
		if strings.Contains(res.Stdout+res.Stderr, value) {
			l.t.Fatalf("the sandbox saw the secret in api.test's answer")
		}
	}
	if got, ok := l.seen.last("api.test:443", "/injected"); !ok || got.Header.Get("Authorization") != "Bearer "+value {
		l.t.Fatalf("positive control: api.test did not get the secret (%+v)", got.Header)
	}
}

// onlyAt asserts that of every request the outside servers got, only
// those to server held value.
func (l *srvLab) onlyAt(value, server string) {
	l.t.Helper()
	for _, r := range l.seen.holding(value) {
		if !strings.HasPrefix(r, server+" ") {
			l.t.Errorf("the secret reached another destination: %s", r)
		}
	}
}

// The secret never enters the sandbox. Positive controls: api.test gets
// it on requests the sandbox makes (so it is on the wire just outside);
// the same memory and file searches find a control marker the sandbox
// does hold. Then, read from the host (where every byte can be read, and
// without ever giving the value to the sandbox): not in the memory of any
// of the sandbox's processes — the agent, and a process that made HTTPS
// requests to api.test and keeps what it got — nor in any file of its
// root (the read-only /usr underlay aside, except what was written
// there), nor in the environment or command line of any process on the
// machine. On gVisor the sandbox's processes and files are not the host's:
// the search reads where gVisor keeps them instead (secretNotInSentry).
func TestSecretNeverInSandbox(t *testing.T) {
	l := newSrvLab(t)
	value, control := randomMarker("pdk-hostile-secret"), randomMarker("pdk-hostile-control")
	id := l.secretSandbox(value)
	l.injected(id, value)

	// A long-lived process that holds the control marker and what two
	// HTTPS requests to api.test returned (explicit proxy and transparent).
	if _, err := l.c.WriteFile(ctxT(t, time.Minute), id, client.WriteRequest{Path: "/workspace/control.txt"},
		strings.NewReader(control), int64(len(control))); err != nil {
		t.Fatal(err)
	}
	script := `import urllib.request, time
keep = [open('/workspace/control.txt').read() + '!']
keep.append(urllib.request.urlopen('https://api.test/held-explicit', timeout=10).read())
direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))
keep.append(direct.open('https://api.test/held-transparent', timeout=10).read())
open('/workspace/ready', 'w').write(repr(keep[1:]))
time.sleep(600)
`
	if _, err := l.c.StartProcess(ctxT(t, time.Minute), id, client.ProcessRequest{Cmd: []string{"python3", "-c", script}}); err != nil {
		t.Fatal(err)
	}
	var ready string
	waitFor(30*time.Second, func() bool {
		b, err := l.c.ReadFile(ctxT(t, time.Minute), id, "/workspace/ready")
		ready = string(b)
		return err == nil
	})
	if !strings.Contains(ready, "authorized") {
		t.Fatalf("positive control: the holding process's requests to api.test: %q", ready)
	}
	if onGVisor(t) {
		l.secretNotInSentry(id, value, control)
	} else {
		l.secretNotInProcesses(id, value, control)
	}
	// Environments and command lines, of every process on the machine.
	procs, _ := filepath.Glob("/proc/[0-9]*")
	readable := 0
	for _, p := range procs {
		for _, f := range []string{"environ", "cmdline"} {
			b, err := os.ReadFile(filepath.Join(p, f))
			if err != nil {
				continue
			}
			readable++
			if bytes.Contains(b, []byte(value)) {
				t.Errorf("%s/%s holds the secret", p, f)
			}
		}
	}
	if readable < 10 {
		t.Fatalf("positive control: only %d process files could be read", readable)
	}
	// What the sandbox's owner can read about it: the rule, never the value.
	if code, body := l.api("GET", "/v1/sandboxes/"+id, l.key, nil); code != 200 || strings.Contains(body, value) || !strings.Contains(body, "{secret:API_TOKEN}") {
		t.Errorf("GET the sandbox: %d %s", code, clipS(body))
	}
	l.onlyAt(value, "api.test:443")
	l.stillServes(id)
	l.netAudited(id, true, `"name":"api.test"`)
}

// secretNotInProcesses is the native form of the memory and file search:
// the sandbox's processes are host processes, read through their pids,
// and its files are read through its agent's root.
func (l *srvLab) secretNotInProcesses(id, value, control string) {
	t := l.t
	t.Helper()
	pids := l.sandboxPids(id)
	python := 0
	for _, p := range pids {
		if b, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p), "cmdline")); bytes.HasPrefix(b, []byte("python3")) {
			python = p
		}
	}
	if len(pids) < 2 || python == 0 {
		t.Fatalf("positive control: the sandbox's processes were not found from the host (pids %v, python %d)", pids, python)
	}
	found, read := memHolding(pids, value, control)
	t.Logf("read %d MiB of memory of the sandbox's %d processes %v", read>>20, len(pids), pids)
	if !contains(found[control], python) {
		t.Fatalf("positive control: the control marker was not found in the memory of the process holding it (found in %v)", found[control])
	}
	if len(found[value]) > 0 {
		t.Errorf("the secret is in the memory of the sandbox's processes %v", found[value])
	}

	// Its files, read from the host through its agent's root.
	root := filepath.Join("/proc", strconv.Itoa(pids[0]), "root")
	st, err := os.Stat(filepath.Join(root, "etc", "hostname"))
	must(t, err)
	created := st.ModTime()
	var files, controlAt, secretAt []string
	_ = filepath.WalkDir(root+"/", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel := strings.TrimPrefix(p, root)
		if d.IsDir() {
			switch rel {
			case "/proc", "/sys", "/dev":
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		if strings.HasPrefix(rel, "/usr/") {
			if fi, err := d.Info(); err != nil || fi.ModTime().Before(created) {
				return nil // the host's read-only /usr, not written by the sandbox
			}
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil
		}
		files = append(files, rel)
		if bytes.Contains(b, []byte(control)) {
			controlAt = append(controlAt, rel)
		}
		if bytes.Contains(b, []byte(value)) {
			secretAt = append(secretAt, rel)
		}
		return nil
	})
	t.Logf("searched %d files of the sandbox's root", len(files))
	if !contains(controlAt, "/workspace/control.txt") {
		t.Fatalf("positive control: the file search did not find the planted control (found in %v)", controlAt)
	}
	if len(secretAt) > 0 {
		t.Errorf("the secret is in the sandbox's files: %v", secretAt)
	}
}

// secretNotInSentry is the gVisor form of the memory and file search. The
// sandbox's processes are tasks of gVisor's kernel, not host processes:
// from the host, every byte of their memory (and of the sandbox's tmpfs
// mounts) is in the sentry's memory file, every byte written to the
// sandbox's overlays is in their filestore files (unlinked, in the layer
// directory), and what gVisor's kernel keeps for itself (its netstack's
// buffers, its own heap) is in the private memory of the sentry and the
// gofer. Each is read from the host, through the sentry's descriptors and
// the host processes' memory, without the value ever entering the sandbox.
// Positive controls: the control marker, held by the Python process and
// written to /workspace/control.txt, is found in the memory file and in a
// filestore.
func (l *srvLab) secretNotInSentry(id, value, control string) {
	t := l.t
	t.Helper()
	pids := l.sandboxPids(id)
	if len(pids) == 0 {
		t.Fatalf("positive control: the sandbox's sentry was not found from the host")
	}
	found, read := sentryFiles(pids, value, control)
	t.Logf("read %d MiB of the sandbox's memory and filestore files (host processes %v)", read>>20, pids)
	if !found[control]["memory"] {
		t.Fatalf("positive control: the control marker held by a process was not found in the sentry's memory file (found in %v)", found[control])
	}
	if !found[control]["filestore"] {
		t.Fatalf("positive control: the control file's content was not found in the overlay's filestore (found in %v)", found[control])
	}
	if len(found[value]) > 0 {
		t.Errorf("the secret is in the sandbox's memory or files: %v", found[value])
	}
	priv, n := memHoldingIn(pids, true, value)
	t.Logf("read %d MiB of the private memory of the sentry, gofer and stubs", n>>20)
	if n == 0 {
		t.Fatal("positive control: no private memory of the sandbox's host processes could be read")
	}
	if len(priv[value]) > 0 {
		t.Errorf("the secret is in the private memory of the sandbox's host processes %v", priv[value])
	}
}

// sentryFiles searches every memory file ("/memfd:…", the sentry's
// "runsc-memory" among them) and overlay filestore ("runsc-filestore-…")
// the processes pids hold open, reading only their populated extents
// (SEEK_DATA/SEEK_HOLE: the memory file is as large as the sandbox's
// memory, sparsely). It returns, per value, the kinds of file it is in
// ("memory", "filestore") and how many bytes it read.
func sentryFiles(pids []int, values ...string) (map[string]map[string]bool, int64) {
	found := map[string]map[string]bool{}
	seen := map[[2]uint64]bool{}
	longest := 0
	for _, v := range values {
		longest = max(longest, len(v))
	}
	var total int64
	buf := make([]byte, 4<<20)
	for _, pid := range pids {
		fds, _ := filepath.Glob(fmt.Sprintf("/proc/%d/fd/*", pid))
		for _, fd := range fds {
			link, err := os.Readlink(fd)
			if err != nil {
				continue
			}
			kind := ""
			switch {
			case strings.HasPrefix(link, "/memfd:"):
				kind = "memory"
			case strings.Contains(filepath.Base(link), "runsc-filestore-"):
				kind = "filestore"
			default:
				continue
			}
			f, err := os.Open(fd)
			if err != nil {
				continue
			}
			var st unix.Stat_t
			if unix.Fstat(int(f.Fd()), &st) != nil || seen[[2]uint64{st.Dev, st.Ino}] {
				f.Close()
				continue
			}
			seen[[2]uint64{st.Dev, st.Ino}] = true
			for off := int64(0); ; {
				data, err := unix.Seek(int(f.Fd()), off, unix.SEEK_DATA)
				if err != nil {
					break // ENXIO: no data past off
				}
				hole, err := unix.Seek(int(f.Fd()), data, unix.SEEK_HOLE)
				if err != nil || hole <= data {
					break
				}
				for p := data; p < hole; {
					n, _ := f.ReadAt(buf[:min(int64(len(buf)), hole-p)], p)
					if n <= 0 {
						break
					}
					total += int64(n)
					for _, v := range values {
						if bytes.Contains(buf[:n], []byte(v)) {
							if found[v] == nil {
								found[v] = map[string]bool{}
							}
							found[v][kind] = true
						}
					}
					if p+int64(n) >= hole || n <= longest {
						p += int64(n)
					} else {
						p += int64(n - longest) // overlap: a value across two reads
					}
				}
				off = hole
			}
			f.Close()
		}
	}
	return found, total
}

// A secret bound to api.test goes nowhere else: not to another allowed
// name (other.test, which echoes every header back, so the sandbox would
// see it), not in cleartext (to another port, or to the cleartext port a
// rule names: secrets travel only inside TLS), not to a port without a
// rule, not after a redirect (to other.test, or to cleartext), not to
// other.test's address under api.test's server name, not with another
// Host inside api.test's TLS, not through the explicit proxy. Positive
// control: from H other.test echoes an Authorization back; in the same
// sandbox api.test:443 gets the secret.
func TestSecretOnlyToItsDestination(t *testing.T) {
	l := newSrvLab(t)
	if code, body, err := l.get("GET", "https://other.test/control", "", "Authorization", "Bearer echo-control"); err != nil || code != 200 ||
		!strings.Contains(body, "Bearer echo-control") {
		t.Fatalf("positive control: other.test echoes headers from H: %d %q %v", code, body, err)
	}
	value := randomMarker("pdk-hostile-secret")
	id := l.secretSandbox(value)
	l.injected(id, value)
	before := map[string]int{}
	for _, s := range []string{"other.test:443", "api.test:80", "api.test:8080", "api.test:8443"} {
		before[s] = l.seen.count(s)
	}
	attempts := []struct{ what, cmd string }{
		{"another allowed name", curlT + "-k https://other.test/a"},
		{"another allowed name, explicit proxy", curlX + "-k https://other.test/a-explicit"},
		{"cleartext to the same host", curlT + "http://api.test/b"},
		{"cleartext, explicit proxy", curlX + "http://api.test/b-explicit"},
		{"cleartext on a rule's own port", curlT + "http://api.test:8080/b2"},
		{"cleartext on a rule's own port, explicit proxy", curlX + "http://api.test:8080/b2-explicit"},
		{"a port of the same host without a rule", curlT + "-k https://api.test:8443/c"},
		{"a redirect to another name", curlT + "-k -L https://api.test/redirect-other"},
		{"a redirect to cleartext", curlT + "-L https://api.test/redirect-http"},
		{"api.test's server name at other.test's address", curlT + "-k --resolve api.test:443:" + ipOther + " https://api.test/f"},
		{"another Host inside api.test's TLS", curlT + "-H 'Host: other.test' https://api.test/g"},
	}
	for _, a := range attempts {
		res := l.sh(id, a.cmd+"; echo exit=$?")
		if strings.Contains(res.Stdout+res.Stderr, value) {
			t.Errorf("%s: the sandbox got the secret back:\n%s", a.what, res.Stdout)
		}
		t.Logf("%s: %s", a.what, clipS(strings.TrimSpace(strings.ReplaceAll(res.Stdout+res.Stderr, "\n", " | "))))
	}
	// The requests did go out (so "not sent" is not "nothing sent").
	for s, n := range before {
		if l.seen.count(s) <= n {
			t.Errorf("positive control: no request reached %s", s)
		}
	}
	if _, ok := l.seen.last("other.test:443", "/after-redirect"); !ok {
		t.Error("positive control: the redirect to other.test was not followed")
	}
	if _, ok := l.seen.last("api.test:80", "/after-redirect"); !ok {
		t.Error("positive control: the redirect to cleartext was not followed")
	}
	if _, ok := l.seen.last("other.test:443", "/f"); ok {
		t.Error("a TLS connection naming api.test reached other.test's server")
	}
	l.onlyAt(value, "api.test:443")
	l.stillServes(id)
	l.netAudited(id, true, `"name":"other.test"`)
	l.netAudited(id, false, ipOther)
}

// Reading the injected header back: TRACE (and TRACK, and "trace" in
// other letter cases, which some servers take for it) makes a server echo
// the request it got — with the secret. The proxy refuses them to hosts
// that get secrets. The sandbox's own Authorization is replaced, never
// added to. Positive control: from H, api.test echoes TRACE, TRACK and
// "trace" requests with their headers.
func TestSecretNotReadBack(t *testing.T) {
	l := newSrvLab(t)
	methods := []string{"TRACE", "TRACK", "trace", "Trace"}
	for _, m := range methods {
		code, body, err := l.get(m, "https://api.test/", "", "Authorization", "Bearer trace-control")
		if err != nil || code != 200 || !strings.Contains(body, "Bearer trace-control") {
			t.Fatalf("positive control: %s to api.test from H echoes the headers: %d %q %v", m, code, body, err)
		}
	}
	value := randomMarker("pdk-hostile-secret")
	id := l.secretSandbox(value)
	l.injected(id, value)
	for _, m := range methods {
		for _, c := range []string{curlT, curlX} {
			res := l.sh(id, c+"-X "+m+" https://api.test/trace; echo exit=$?")
			if strings.Contains(res.Stdout+res.Stderr, value) {
				t.Errorf("%s (%s): the sandbox read the secret back:\n%s", m, strings.TrimSpace(c), res.Stdout)
			}
			t.Logf("%s (%s): %s", m, strings.TrimSpace(c), clipS(strings.TrimSpace(strings.ReplaceAll(res.Stdout+res.Stderr, "\n", " | "))))
		}
	}
	if got, ok := l.seen.last("api.test:443", "/trace"); ok {
		t.Errorf("a %s request reached api.test with headers %v", got.Method, got.Header)
	}
	// The sandbox's own header is replaced: upstream gets the secret only.
	res := l.sh(id, curlT+"-H 'Authorization: Bearer forged' -H 'authorization: Basic Zm9yZ2Vk' https://api.test/own-header")
	if !strings.Contains(res.Stdout, "authorized") {
		t.Errorf("with the sandbox's own Authorization: %+v", res)
	}
	if got, ok := l.seen.last("api.test:443", "/own-header"); !ok || len(got.Header.Values("Authorization")) != 1 {
		t.Errorf("api.test got Authorization %q: the sandbox's own was kept", got.Header.Values("Authorization"))
	}
	l.onlyAt(value, "api.test:443")
	l.stillServes(id)
	l.audited("the exec of the TRACE request", client.AuditQuery{Sandbox: id, Action: "exec"}, func(r audit.Record) bool {
		return r.Phase == audit.PhaseIntent && bytes.Contains(r.Args, []byte("-X TRACE"))
	})
}

// The audit log records the secret's life — stored, used, rotated,
// deleted, refused (naming the missing secret) — and never its value (nor
// does the server's debug log, nor any API answer). Positive controls: a
// marker of the same shape given as an exec argument is found, by the
// same search, in the log's files; the debug log shows the interceptions.
func TestSecretAuditedWithoutValue(t *testing.T) {
	l := newSrvLab(t, "--log-level", "debug") // the server's log sees every interception
	v1, v2 := randomMarker("pdk-hostile-secret"), randomMarker("pdk-hostile-rotated")
	control := randomMarker("pdk-hostile-control")
	id := l.secretSandbox(v1) // PUT: 201
	l.injected(id, v1)
	// Rotation: the next connection carries the new value.
	if _, err := l.c.SetSecret(ctxT(t, time.Minute), "", "API_TOKEN", v2); err != nil {
		t.Fatal(err)
	}
	want := "Bearer " + v2
	l.wantAuth.Store(&want)
	l.injected(id, v2)
	for _, p := range []string{"/v1/secrets", "/v1/secrets/API_TOKEN"} {
		code, body := l.api("GET", p, l.key, nil)
		if code != 200 || !strings.Contains(body, "API_TOKEN") || strings.Contains(body, v1) || strings.Contains(body, v2) {
			t.Errorf("GET %s: %d %s", p, code, clipS(body))
		}
	}
	// Deleted while the sandbox runs: its requests to api.test are refused,
	// none goes out without the secret.
	if err := l.c.DeleteSecret(ctxT(t, time.Minute), "", "API_TOKEN"); err != nil {
		t.Fatal(err)
	}
	n := l.seen.count("api.test:443")
	if res := l.sh(id, curlT+"https://api.test/after-delete"); res.ExitCode == 0 {
		t.Errorf("after the delete a request to api.test succeeded: %+v", res)
	}
	if l.seen.count("api.test:443") != n {
		t.Error("after the delete a request reached api.test (without its secret)")
	}
	l.sh(id, "echo "+control)
	l.stillServes(id)

	// The records.
	l.httpAudited("", "/v1/secrets/{name}", http.StatusCreated)
	l.httpAudited("", "/v1/secrets/{name}", http.StatusOK)
	l.httpAudited("", "/v1/secrets/{name}", http.StatusNoContent)
	l.audited("the create with the rule", client.AuditQuery{Sandbox: "", Action: "sandbox.create"}, func(r audit.Record) bool {
		return r.Phase == audit.PhaseIntent && bytes.Contains(r.Args, []byte(`"inject":[{"header":"Authorization","host":"api.test"`))
	})
	l.netAudited(id, true, `"name":"api.test"`)
	l.netAudited(id, false, "API_TOKEN")
	// The values: nowhere in the log (its files, its export) or the
	// server's log.
	raw := readAll(t, l.auditDir())
	var export bytes.Buffer
	must(t, l.c.AuditExport(ctxT(t, time.Minute), client.AuditQuery{}, &export))
	if !bytes.Contains(raw, []byte(control)) || !bytes.Contains(export.Bytes(), []byte(control)) {
		t.Fatal("positive control: the marker given as an exec argument is not found in the log")
	}
	srvLog, _ := os.ReadFile(l.logPath)
	if !bytes.Contains(srvLog, []byte("injecting secrets")) {
		t.Fatal("positive control: the server's debug log shows no interception")
	}
	for name, b := range map[string][]byte{"audit log files": raw, "audit export": export.Bytes(), "server log": srvLog} {
		for _, v := range []string{v1, v2} {
			if bytes.Contains(b, []byte(v)) {
				t.Errorf("the %s hold a secret value", name)
			}
		}
	}
	t.Logf("searched %d bytes of audit log, %d of server log", len(raw), len(srvLog))
	if code, out := l.verify(); code != 0 {
		t.Errorf("paddock audit verify: %s", out)
	}
}

// Another tenant's secrets: secret names belong to a tenant, so a rule
// naming another tenant's secret names nothing (400); a tenant with
// deny_secrets can neither store nor use one (403); a sandbox token
// cannot manage secrets. Positive control: the owner's own sandbox gets
// its secret, and a tenant's own secret of the same name is its own.
func TestSecretOtherTenants(t *testing.T) {
	l := newSrvLab(t)
	owner := l.tenantKey("owner", client.Quotas{})
	thief := l.tenantKey("thief", client.Quotas{})
	denied := l.tenantKey("denied", client.Quotas{DenySecrets: true})
	vOwner, vThief := randomMarker("pdk-hostile-owner"), randomMarker("pdk-hostile-thief")
	ctx := ctxT(t, 2*time.Minute)
	if _, err := l.as(owner.Key).SetSecret(ctx, "", "API_TOKEN", vOwner, injectHosts...); err != nil {
		t.Fatal(err)
	}
	want := "Bearer " + vOwner
	l.wantAuth.Store(&want)
	mine, err := l.as(owner.Key).Create(ctx, injectSpec())
	must(t, err)
	l.injectedAs(l.as(owner.Key), mine.ID, vOwner)

	_, err = l.as(thief.Key).Create(ctx, injectSpec())
	if e, ok := err.(*client.Error); !ok || e.Status != 400 || !strings.Contains(e.Message, "API_TOKEN") {
		t.Fatalf("a rule naming another tenant's secret: %v", err)
	}
	// The thief's own secret of the same name is the thief's.
	if _, err := l.as(thief.Key).SetSecret(ctx, "", "API_TOKEN", vThief, injectHosts...); err != nil {
		t.Fatal(err)
	}
	theirs, err := l.as(thief.Key).Create(ctx, injectSpec())
	must(t, err)
	l.shAs(l.as(thief.Key), theirs.ID, curlT+"https://api.test/thief")
	if got, ok := l.seen.last("api.test:443", "/thief"); !ok || got.Header.Get("Authorization") != "Bearer "+vThief {
		t.Errorf("the thief's sandbox sent Authorization %q", got.Header.Get("Authorization"))
	}
	if _, err := l.as(denied.Key).SetSecret(ctx, "", "API_TOKEN", "x"); !isStatus(err, 403) {
		t.Errorf("deny_secrets: storing a secret: %v", err)
	}
	if _, err := l.as(denied.Key).Create(ctx, injectSpec()); !isStatus(err, 403) {
		t.Errorf("deny_secrets: a rule: %v", err)
	}
	tok, err := l.as(owner.Key).CreateToken(ctx, mine.ID, []client.Scope{"read", "write", "exec"}, time.Hour)
	must(t, err)
	if _, err := l.as(tok.Token).SetSecret(ctx, "", "API_TOKEN", "x"); !isStatus(err, 403) {
		t.Errorf("a sandbox token storing a secret: %v", err)
	}
	if _, err := l.as(tok.Token).ListSecrets(ctx, ""); !isStatus(err, 403) && !isStatus(err, 404) {
		t.Errorf("a sandbox token listing secrets: %v", err)
	}
	if _, err := l.as(owner.Key).ListSecrets(ctx, "thief"); !isStatus(err, 403) && !isStatus(err, 404) {
		t.Errorf("a tenant's key listing another tenant's secrets: %v", err)
	}
	l.onlyAt(vOwner, "api.test:443")
	for _, r := range l.seen.holding(vOwner) {
		if strings.Contains(r, "/thief") {
			t.Errorf("the owner's secret went with the thief's request: %s", r)
		}
	}
	l.stillServesAs(l.as(owner.Key), mine.ID)
	l.stillServesAs(l.as(thief.Key), theirs.ID)
	l.audited("the refused create", client.AuditQuery{Action: "sandbox.create"}, func(r audit.Record) bool {
		return r.Phase == audit.PhaseResult && r.Code == "invalid_argument" && strings.Contains(r.Error, "API_TOKEN")
	})
}

func isStatus(err error, status int) bool {
	e, ok := err.(*client.Error)
	return ok && e.Status == status
}

func contains[T comparable](xs []T, x T) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}
