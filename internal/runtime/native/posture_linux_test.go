//go:build linux

package native_test

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// statusField reads one field of a /proc/<pid>/status text.
func statusField(status, name string) string {
	for _, line := range strings.Split(status, "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && k == name {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// TestPosture reads the security posture back from /proc inside a sandbox
// and derives what it must be from the spec. The positive control is the
// same reading in this (unsandboxed, root) test process.
func TestPosture(t *testing.T) {
	e := testenv.New(t, testenv.Options{})
	host, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	hs := string(host)
	if statusField(hs, "CapEff") == "0000000000000000" || statusField(hs, "NoNewPrivs") != "0" || statusField(hs, "Seccomp") != "0" {
		t.Fatalf("positive control: the test process is already restricted:\n%s", hs)
	}

	spec := sandbox.Spec{MemoryMB: 256, Pids: 100, Labels: map[string]string{"t": "posture"}}
	sb := e.Create(spec)
	for _, user := range []string{"root", "user"} {
		t.Run("workload-"+user, func(t *testing.T) {
			res, err := e.Client.Exec(t.Context(), sb.ID, execReq(user, "cat", "/proc/self/status"))
			if err != nil || res.ExitCode != 0 {
				t.Fatalf("exec: %v %+v", err, res)
			}
			st := res.Stdout
			for _, f := range []string{"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"} {
				if v := statusField(st, f); v != "0000000000000000" {
					t.Errorf("%s = %s, want 0", f, v)
				}
			}
			if v := statusField(st, "NoNewPrivs"); v != "1" {
				t.Errorf("NoNewPrivs = %s, want 1", v)
			}
			if v := statusField(st, "Seccomp"); v != "2" {
				t.Errorf("Seccomp = %s, want 2 (filter)", v)
			}
			wantUID := map[string]string{"root": "0", "user": "1000"}[user]
			if f := strings.Fields(statusField(st, "Uid")); len(f) == 0 || f[0] != wantUID {
				t.Errorf("Uid = %v, want %s", f, wantUID)
			}
		})
	}

	t.Run("pid1-is-the-guest", func(t *testing.T) {
		res := e.Sh(sb.ID, `tr '\0' ' ' </proc/1/cmdline; echo; echo $$`)
		lines := strings.Split(strings.TrimSpace(res.Stdout), "\n")
		if len(lines) != 2 || strings.TrimSpace(lines[0]) != "paddock-guest" {
			t.Fatalf("/proc/1/cmdline = %q", res.Stdout)
		}
		if lines[1] == "1" {
			t.Fatal("the workload is pid 1")
		}
		// The agent is not ptrace-accessible to workloads (non-dumpable):
		// its environment, memory, binary and descriptors are out of reach
		// even to the sandbox's root. The same reads of a workload's own
		// process succeed (positive control).
		probe := `for f in environ maps; do cat /proc/%[1]s/$f >/dev/null 2>&1 && echo open-$f; done
			readlink /proc/%[1]s/exe >/dev/null 2>&1 && echo open-exe
			readlink /proc/%[1]s/fd/0 >/dev/null 2>&1 && echo open-fd
			readlink /proc/%[1]s/root >/dev/null 2>&1 && echo open-root; echo done`
		if res := e.Sh(sb.ID, fmt.Sprintf(probe, "self")); strings.Count(res.Stdout, "open-") != 5 {
			t.Fatalf("positive control: a workload cannot read its own /proc: %q", res.Stdout)
		}
		if res := e.Sh(sb.ID, fmt.Sprintf(probe, "1")); strings.Contains(res.Stdout, "open-") {
			t.Fatalf("the agent's /proc entries are open to workloads: %q", res.Stdout)
		}
	})

	t.Run("signals-to-pid1-are-dropped", func(t *testing.T) {
		// A workload's default dispositions are intact (positive control:
		// it dies of SIGTERM), but the agent drops every signal sent to it.
		res, err := e.Client.Exec(t.Context(), sb.ID, execReq("root", "sh", "-c", "kill -TERM $$; sleep 5"))
		if err != nil || res.Signal != "SIGTERM" {
			t.Fatalf("positive control: SIGTERM did not kill a workload: %v %+v", err, res)
		}
		e.Sh(sb.ID, "for s in TERM INT HUP QUIT ILL TRAP ABRT STKFLT SYS BUS FPE SEGV USR1 USR2 PIPE ALRM XCPU XFSZ VTALRM IO PWR WINCH CONT TSTP TTIN TTOU 34 40 50 64; do kill -$s 1; done; kill -1 -1; true")
		if res := e.Exec(sb.ID, "echo", "alive"); res.Stdout != "alive\n" {
			t.Fatalf("the agent died of a signal: %+v", res)
		}
	})

	t.Run("netns-own-distinct-and-locked", func(t *testing.T) {
		// Sandboxes start in network namespaces made ahead (issue 23):
		// each must still have one of its own, neither the host's nor
		// another sandbox's, with a loopback, and no workload may
		// change it (the positive control is this root test process, which
		// can make a namespace of its own and set its loopback down there).
		host, err := os.Readlink("/proc/self/ns/net")
		if err != nil {
			t.Fatal(err)
		}
		other := e.Create(sandbox.Spec{})
		ns := func(id string) string {
			return strings.TrimSpace(e.Sh(id, "readlink /proc/self/ns/net").Stdout)
		}
		a, b := ns(sb.ID), ns(other.ID)
		if a == "" || a == host || b == host || a == b {
			t.Fatalf("network namespaces: host %s, sandboxes %q and %q", host, a, b)
		}
		if out, err := exec.Command("unshare", "-n", "sh", "-c", "ip link set lo up && ip link set lo down && echo changed").CombinedOutput(); err != nil || !strings.Contains(string(out), "changed") {
			t.Fatalf("positive control: root cannot change a loopback of its own namespace: %v %s", err, out)
		}
		res := e.Sh(sb.ID, `grep -q ' lo:' /proc/net/dev && echo has-lo
			ip link set lo down 2>/dev/null && echo changed; echo done`)
		if !strings.Contains(res.Stdout, "has-lo") || strings.Contains(res.Stdout, "changed") {
			t.Fatalf("inside: %q %q", res.Stdout, res.Stderr)
		}
	})

	t.Run("uid-map-unprivileged-and-distinct", func(t *testing.T) {
		other := e.Create(sandbox.Spec{})
		m1 := uidMap(t, e, sb.ID)
		m2 := uidMap(t, e, other.ID)
		if m1[0] != 0 || m2[0] != 0 {
			t.Fatalf("sandbox root is not uid 0 inside: %v %v", m1, m2)
		}
		if m1[1] < 65536 || m2[1] < 65536 {
			t.Fatalf("sandbox root maps to a privileged host uid: %v %v", m1, m2)
		}
		if m1[1] == m2[1] {
			t.Fatalf("two sandboxes share host uid %d", m1[1])
		}
		if m1[1]+m1[2] > m2[1] && m2[1]+m2[2] > m1[1] {
			t.Fatalf("uid ranges overlap: %v %v", m1, m2)
		}
	})

	t.Run("hostname-and-namespaces", func(t *testing.T) {
		res := e.Sh(sb.ID, `hostname; for n in user pid mnt net ipc uts cgroup; do readlink /proc/self/ns/$n; done`)
		lines := strings.Fields(res.Stdout)
		if len(lines) != 8 || lines[0] != sb.ID {
			t.Fatalf("hostname/ns: %q", res.Stdout)
		}
		for i, n := range []string{"user", "pid", "mnt", "net", "ipc", "uts", "cgroup"} {
			host, err := os.Readlink("/proc/self/ns/" + n)
			if err != nil {
				t.Fatal(err)
			}
			if lines[i+1] == host {
				t.Errorf("%s namespace is the host's (%s)", n, host)
			}
		}
		// Network: loopback only.
		res = e.Sh(sb.ID, `cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d ' '`)
		if got := strings.Fields(res.Stdout); len(got) != 1 || got[0] != "lo" {
			t.Errorf("interfaces = %v, want only lo", got)
		}
	})

	t.Run("mounts", func(t *testing.T) {
		res := e.Sh(sb.ID, `awk '{print $2, $3, $4}' /proc/self/mounts`)
		mounts := map[string]string{}
		opts := map[string]string{}
		for _, line := range strings.Split(strings.TrimSpace(res.Stdout), "\n") {
			if f := strings.Fields(line); len(f) == 3 {
				mounts[f[0]] = f[1]
				opts[f[0]] = strings.Split(f[2], ",")[0]
			}
		}
		want := map[string]string{"/": "overlay", "/usr": "overlay", "/proc": "proc", "/dev": "tmpfs",
			"/dev/pts": "devpts", "/dev/shm": "tmpfs", "/dev/null": "devtmpfs", "/sys": "tmpfs"}
		for p, fs := range want {
			if mounts[p] != fs {
				t.Errorf("mount %s is %q, want %s (all: %v)", p, mounts[p], fs, mounts)
			}
		}
		// Landlock grants writes on "/" (fsRules); /proc, /sys and /dev are
		// closed by their mounts: read-only, while the root, the device
		// nodes' own mounts, /dev/pts and /dev/shm stay writable.
		for p, o := range map[string]string{"/": "rw", "/proc": "ro", "/sys": "ro", "/dev": "ro", "/dev/shm": "rw", "/dev/pts": "rw", "/dev/null": "rw"} {
			if opts[p] != o {
				t.Errorf("mount %s is %q, want %s", p, opts[p], o)
			}
		}
		for p, fs := range mounts {
			if strings.HasPrefix(p, e.Data) || (strings.HasPrefix(p, "/sys/") && fs == "sysfs") {
				t.Errorf("unexpected mount %s", p)
			}
		}
		if res := e.Sh(sb.ID, `ls -A /sys | wc -l`); strings.TrimSpace(res.Stdout) != "0" {
			t.Errorf("/sys is not empty: %q", res.Stdout)
		}
		// /dev/shm is sized from the spec: half the memory.
		res = e.Sh(sb.ID, `df -k /dev/shm | tail -1 | awk '{print $2}'`)
		if kb, _ := strconv.Atoi(strings.TrimSpace(res.Stdout)); kb != int(spec.MemoryMB)*1024/2 {
			t.Errorf("/dev/shm is %s KiB, want %d", strings.TrimSpace(res.Stdout), spec.MemoryMB*1024/2)
		}
		res = e.Sh(sb.ID, `ls /dev | sort | tr '\n' ' '`)
		if got := strings.TrimSpace(res.Stdout); got != "fd full null ptmx pts random shm stderr stdin stdout tty urandom zero" {
			t.Errorf("/dev = %q", got)
		}
	})

	t.Run("host-only-paths-absent", func(t *testing.T) {
		// A marker in the host's /root, /home, /var, /run and /etc must not
		// be visible; the marker exists on the host (positive control).
		marker := fmt.Sprintf("paddock-posture-%d", os.Getpid())
		var paths []string
		for _, d := range []string{"/root", "/var/tmp", "/run", "/etc", "/tmp"} {
			p := d + "/" + marker
			if err := os.WriteFile(p, []byte("host secret"), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.Remove(p) })
			if _, err := os.Stat(p); err != nil {
				t.Fatalf("positive control: %v", err)
			}
			paths = append(paths, p)
		}
		paths = append(paths, e.Data+"/paddock.db", "/etc/shadow", "/etc/ssh", "/etc/machine-id")
		script := "for p in " + strings.Join(paths, " ") + "; do [ -e $p ] && echo FOUND $p; done; true"
		if res := e.Sh(sb.ID, script); strings.Contains(res.Stdout, "FOUND") {
			t.Fatalf("host paths visible in the sandbox:\n%s", res.Stdout)
		}
		if res := e.Sh(sb.ID, "cut -d: -f1 /etc/passwd | tr '\\n' ' '"); strings.TrimSpace(res.Stdout) != "root user nobody" {
			t.Errorf("/etc/passwd users = %q", res.Stdout)
		}
	})

	t.Run("proc-sys-dev-not-writable", func(t *testing.T) {
		// As root natively the write-opens succeed (positive control); in
		// the sandbox the read-only /proc, /sys and /dev mounts refuse them
		// (Landlock grants writes on "/"). /proc/sys/kernel/shmmax belongs to
		// the sandbox's own IPC namespace, whose root is the sandbox's root:
		// only the mount refuses it.
		for _, p := range []string{"/proc/sys/kernel/core_pattern", "/proc/sys/kernel/shmmax", "/proc/self/mem"} {
			f, err := os.OpenFile(p, os.O_WRONLY, 0)
			if err != nil {
				t.Fatalf("positive control: %v", err)
			}
			f.Close()
		}
		if fi, err := os.Stat("/proc/sysrq-trigger"); err != nil || fi.Mode().Perm()&0o200 == 0 {
			t.Logf("this kernel has no writable /proc/sysrq-trigger: %v", err)
		}
		probe := func(uid string) string {
			res, err := e.Client.Exec(t.Context(), sb.ID, execReq(uid, "sh", "-c", `for p in /proc/sys/kernel/core_pattern /proc/sys/kernel/shmmax /proc/sys/user/max_user_namespaces /proc/sysrq-trigger /proc/self/mem /proc/1/mem /proc/self/oom_score_adj /proc/self/attr/current /proc/self/comm; do
				[ -e $p ] || continue; true >> $p 2>/dev/null && echo "OPENED $p"; done
				for p in /sys/kernel/uevent_helper /sys/x /dev/x /proc/x; do true > $p 2>/dev/null && echo "CREATED $p"; done
				mkdir /sys/fs 2>/dev/null && echo "MKDIR /sys/fs"
				[ -s /proc/kcore ] && echo "KCORE"; [ -s /proc/timer_list ] && echo "TIMER_LIST"
				true > /dev/null && echo devnull; true > /dev/shm/ok-$(id -u) && echo shm; true > /workspace/ok-$(id -u) && echo workspace; true`))
			if err != nil || res.ExitCode != 0 {
				t.Fatalf("%s: %v %+v", uid, err, res)
			}
			return res.Stdout
		}
		for _, uid := range []string{"root", "user"} {
			out := probe(uid)
			// Positive controls: writes elsewhere work.
			for _, w := range []string{"devnull", "shm", "workspace"} {
				if !strings.Contains(out, w+"\n") {
					t.Errorf("%s: positive control: writing %s failed: %q", uid, w, out)
				}
			}
			for _, bad := range []string{"OPENED", "CREATED", "MKDIR", "KCORE", "TIMER_LIST"} {
				if strings.Contains(out, bad) {
					t.Errorf("%s: %q", uid, out)
				}
			}
		}
		// The errno is the mount's, EROFS (not a permission check).
		if res := e.Sh(sb.ID, `true >> /proc/sys/kernel/shmmax`); !strings.Contains(res.Stderr, "Read-only file system") {
			t.Errorf("shmmax write: want EROFS, got %q", res.Stderr)
		}
	})

	t.Run("top-level-writes", func(t *testing.T) {
		// Landlock grants writes on "/": new top-level directories and files
		// work for the sandbox's root (a Dockerfile's RUN mkdir /app).
		res := e.Sh(sb.ID, `mkdir /app && echo x > /app/f && echo y > /new.txt && mkdir -p /data/a/b && echo z > /data/a/b/c && cat /app/f /new.txt /data/a/b/c && rm -r /app /new.txt /data`)
		if res.ExitCode != 0 || res.Stdout != "x\ny\nz\n" {
			t.Fatalf("top-level writes: %+v", res)
		}
	})

	t.Run("cgroup-limits-from-spec", func(t *testing.T) {
		st, err := e.Manager.Stats(t.Context(), e.Scope, sb.ID)
		if err != nil {
			t.Fatal(err)
		}
		if st.Pids < 1 {
			t.Errorf("pids %d: the guest is not in its cgroup", st.Pids)
		}
		mem := readCgroup(t, "memory", e.Prefix+"/"+sb.ID+"/w/memory.limit_in_bytes")
		got, err := e.Manager.Get(t.Context(), e.Scope, sb.ID)
		if err != nil {
			t.Fatal(err)
		}
		// tmpfs layers: memory + disk (the disk the manager gave it: its
		// default depends on the layer store).
		wantMem := (spec.MemoryMB + got.Spec.DiskMB) << 20
		if got.Spec.DiskMB <= 0 {
			t.Fatalf("the sandbox's spec has no disk: %+v", got.Spec)
		}
		if !e.TmpfsLayers() {
			wantMem = spec.MemoryMB << 20
		}
		if mem != strconv.FormatInt(wantMem, 10) {
			t.Errorf("memory.limit_in_bytes = %s, want %d", mem, wantMem)
		}
		if p := readCgroup(t, "pids", e.Prefix+"/"+sb.ID+"/w/pids.max"); p != "100" {
			t.Errorf("pids.max = %s, want 100", p)
		}
		if q := readCgroup(t, "cpu", e.Prefix+"/"+sb.ID+"/cpu.cfs_quota_us"); q != "100000" {
			t.Errorf("cpu.cfs_quota_us = %s, want 100000 (1 cpu)", q)
		}
	})
}

func readCgroup(t *testing.T, ctrl, rel string) string {
	t.Helper()
	b, err := os.ReadFile("/sys/fs/cgroup/" + ctrl + "/" + rel)
	if err != nil {
		t.Skipf("cgroup v1 %s not readable here (v2 host?): %v", ctrl, err)
	}
	return strings.TrimSpace(string(b))
}

func uidMap(t *testing.T, e *testenv.Env, id string) [3]int {
	t.Helper()
	res := e.Exec(id, "cat", "/proc/self/uid_map")
	f := strings.Fields(res.Stdout)
	if len(f) != 3 {
		t.Fatalf("uid_map %q", res.Stdout)
	}
	var m [3]int
	for i := range f {
		m[i], _ = strconv.Atoi(f[i])
	}
	return m
}
