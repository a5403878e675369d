//go:build linux

package agent

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path"
	"path/filepath"
	goruntime "runtime"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/cgroup"
	"github.com/paddockhq/paddock/internal/guest/process"
	"github.com/paddockhq/paddock/internal/guest/rpc"
	"github.com/paddockhq/paddock/internal/guestapi"
	"github.com/paddockhq/paddock/internal/harden"
)

// The guest as PID 1 of a Kubernetes Pod's container (see guestapi's
// pod.go for the hand-over). The container runtime has built the root
// filesystem, /dev, /proc, the network and the hostname; the guest keeps
// the hardening it can apply without privileges over the host — no new
// privileges, non-dumpable, Landlock, seccomp, an emptied bounding set
// for workloads and its own small capability set — and serves the
// protocol over mutual TLS.

// credsOwner owns the credential files between the init container and
// the guest: not root and not the workload user, so that no workload
// (root without capabilities, or uid 1000) can read them even if the
// guest had not deleted them yet. The guest reads them with
// CAP_DAC_OVERRIDE.
const credsOwner = 65532

// PodInit is `paddock-guest pod-init`, the init container: it copies this
// binary to -bin and the files of -from (the Secret) to -creds.
func PodInit(args []string) int {
	fs := flag.NewFlagSet("pod-init", flag.ContinueOnError)
	from := fs.String("from", "", "directory of the mounted Secret")
	bin := fs.String("bin", "", "file to copy the guest binary to")
	creds := fs.String("creds", "", "directory to copy the credentials to")
	if err := fs.Parse(args); err != nil || *from == "" || *bin == "" || *creds == "" {
		return podFail(errors.New("usage: paddock-guest pod-init -from DIR -bin FILE -creds DIR"))
	}
	if err := copyFile("/proc/self/exe", *bin, 0o555, -1); err != nil {
		return podFail(fmt.Errorf("copy the guest binary: %w", err))
	}
	for _, name := range []string{guestapi.PodConfigFile, guestapi.PodCertFile, guestapi.PodKeyFile, guestapi.PodCAFile} {
		if err := copyFile(filepath.Join(*from, name), filepath.Join(*creds, name), 0o400, credsOwner); err != nil {
			return podFail(fmt.Errorf("copy %s: %w", name, err))
		}
	}
	if err := os.Chmod(*creds, 0o700); err != nil {
		return podFail(err)
	}
	return 0
}

func copyFile(src, dst string, mode os.FileMode, owner int) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp := dst + ".tmp"
	out, err := os.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if owner >= 0 {
		if err := out.Chown(owner, owner); err != nil {
			out.Close()
			return err
		}
	}
	if err := out.Chmod(mode); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, dst)
}

// PodMain is `paddock-guest pod -creds DIR`: the agent of one Pod sandbox.
func PodMain(args []string) int {
	mainAt := time.Now()
	// As in Main: the main thread stays with the main goroutine.
	goruntime.LockOSThread()
	swallowSignals()
	fs := flag.NewFlagSet("pod", flag.ContinueOnError)
	creds := fs.String("creds", "", "directory with the sandbox's config and credentials")
	port := fs.Int("port", guestapi.PodPort, "TLS port to serve on")
	if err := fs.Parse(args); err != nil || *creds == "" {
		return podFail(errors.New("usage: paddock-guest pod -creds DIR [-port N]"))
	}
	cfg, tlsConf, err := readPodCreds(*creds)
	if err != nil {
		return podFail(err)
	}
	if cfg.Version != guestapi.Version {
		return podFail(fmt.Errorf("protocol version %d, want %d", cfg.Version, guestapi.Version))
	}
	// Listen before hardening: seccomp and Landlock do not care, but a
	// port a workload could take first must be ours from the start.
	ln, err := net.Listen("tcp", ":"+strconv.Itoa(*port))
	if err != nil {
		return podFail(fmt.Errorf("listen: %w", err))
	}
	a, err := startPod(cfg)
	if err != nil {
		return podFail(err)
	}
	a.phases = append(a.phases, "main="+time.Since(mainAt).Round(time.Microsecond).String())
	fmt.Fprintf(os.Stderr, "paddock-guest: sandbox %s ready on :%d (%s)\n", cfg.ID, *port, strings.Join(a.phases, " "))
	srv := &http.Server{Handler: a.podRoutes(), IdleTimeout: 5 * time.Minute,
		// Port scans and the kubelet's probes end in handshake errors:
		// nothing a reader of the Pod's log needs.
		ErrorLog: log.New(io.Discard, "", 0)}
	err = srv.Serve(tls.NewListener(ln, tlsConf))
	fmt.Fprintf(os.Stderr, "paddock-guest: serve: %v\n", err)
	return 1
}

// readPodCreds reads the hand-over and deletes it: after this the
// credentials exist only in the guest's (non-dumpable) memory.
func readPodCreds(dir string) (*guestapi.PodConfig, *tls.Config, error) {
	read := func(name string) ([]byte, error) {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", name, err)
		}
		return b, nil
	}
	var files [4][]byte
	for i, n := range []string{guestapi.PodConfigFile, guestapi.PodCertFile, guestapi.PodKeyFile, guestapi.PodCAFile} {
		b, err := read(n)
		if err != nil {
			return nil, nil, err
		}
		files[i] = b
	}
	for _, n := range []string{guestapi.PodConfigFile, guestapi.PodCertFile, guestapi.PodKeyFile, guestapi.PodCAFile} {
		if err := os.Remove(filepath.Join(dir, n)); err != nil {
			return nil, nil, fmt.Errorf("delete %s: %w", n, err)
		}
	}
	var cfg guestapi.PodConfig
	if err := json.Unmarshal(files[0], &cfg); err != nil {
		return nil, nil, fmt.Errorf("config: %w", err)
	}
	cert, err := tls.X509KeyPair(files[1], files[2])
	if err != nil {
		return nil, nil, fmt.Errorf("certificate: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(files[3]) {
		return nil, nil, errors.New("ca.crt holds no certificate")
	}
	conf := &tls.Config{
		Certificates: []tls.Certificate{cert},
		ClientCAs:    pool,
		// Mutual TLS: only the holder of the host's key, issued by the
		// runtime's CA for client use, may talk to the agent — neither a
		// workload of this Pod (it shares the network namespace) nor any
		// other Pod. Guest certificates are server-only, so one sandbox's
		// key does not open another sandbox.
		ClientAuth: tls.RequireAndVerifyClientCert,
		MinVersion: tls.VersionTLS13,
		VerifyPeerCertificate: func(_ [][]byte, chains [][]*x509.Certificate) error {
			if len(chains) == 0 || len(chains[0]) == 0 || chains[0][0].Subject.CommonName != guestapi.PodClientName {
				return errors.New("client certificate is not the Paddock host's")
			}
			return nil
		},
	}
	return &cfg, conf, nil
}

func startPod(pc *guestapi.PodConfig) (*Agent, error) {
	t0 := time.Now()
	cfg := guestapi.Config{Version: pc.Version, ID: pc.ID, Hostname: pc.Hostname, Env: pc.Env, ExtraFiles: pc.ExtraFiles}
	if err := podFS(&cfg); err != nil {
		return nil, err
	}
	a := &Agent{cfg: cfg, shell: "/bin/sh"}
	// The container's own memory group, read-only: the OOM counter that
	// tells an exec killed by the kernel's OOM killer from another SIGKILL.
	if memDir, ver, ok := podMemoryCgroup(); ok {
		a.cg = cgroup.NewDelegated(ver, -1, memDir)
	}
	a.phases = append(a.phases, "fs="+time.Since(t0).Round(time.Microsecond).String())
	last := time.Now()
	mark := func(name string) {
		now := time.Now()
		a.phases = append(a.phases, name+"="+now.Sub(last).Round(time.Microsecond).String())
		last = now
	}
	startProcs := func() (err error) {
		a.procs, err = process.NewTable(nil)
		return err
	}
	if err := podLockDown(mark, startProcs); err != nil {
		return nil, err
	}
	a.started = time.Now()
	if _, err := os.Stat("/bin/bash"); err == nil {
		a.shell = "/bin/bash"
	}
	return a, nil
}

// podFS gives the image's root what sandboxes expect: /workspace, the
// user's home, the extra files. /etc/hosts, resolv.conf and the hostname
// are the kubelet's.
func podFS(cfg *guestapi.Config) error {
	for _, d := range []struct {
		p    string
		mode os.FileMode
		uid  int
	}{
		{"/tmp", 0o1777, 0}, {"/workspace", 0o777, 0}, {"/root", 0o700, 0}, {"/home", 0o755, 0},
		{"/home/user", 0o755, 1000}, {"/var/tmp", 0o1777, 0}, {"/run", 0o755, 0},
	} {
		if _, err := os.Lstat(d.p); err == nil {
			continue
		}
		if err := os.MkdirAll(d.p, d.mode); err != nil {
			return fmt.Errorf("mkdir %s: %w", d.p, err)
		}
		_ = os.Chmod(d.p, d.mode)
		_ = os.Chown(d.p, d.uid, d.uid)
	}
	for p, content := range cfg.ExtraFiles {
		full := path.Clean("/" + p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return fmt.Errorf("write %s: %w", full, err)
		}
		_ = os.Remove(full)
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			return fmt.Errorf("write %s: %w", full, err)
		}
	}
	return nil
}

// podLockDown is lockDown without what a container forbids or has done
// already (loopback, hostname, cgroup namespace; nested user namespaces
// are refused by seccomp here and by the runtime's default profile).
func podLockDown(mark func(string), beforeCaps func() error) error {
	if err := unix.Chdir("/workspace"); err != nil {
		return err
	}
	// Non-dumpable: workloads of the same uid cannot read /proc/1/mem or
	// /proc/1/environ, where the credentials now live.
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("set non-dumpable: %w", err)
	}
	if err := harden.SetNoNewPrivs(); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	mark("nnp")
	if err := harden.RestrictFS(podFSRules()); err != nil {
		return fmt.Errorf("landlock: %w", err)
	}
	mark("landlock")
	if err := beforeCaps(); err != nil {
		return fmt.Errorf("spawner: %w", err)
	}
	mark("spawner")
	if err := harden.LimitCaps(PodCaps()); err != nil {
		return fmt.Errorf("capabilities (the container must be granted CHOWN, DAC_OVERRIDE, FOWNER, FSETID, KILL, SETGID, SETUID and SETPCAP): %w", err)
	}
	mark("caps")
	if err := harden.LoadSeccomp(); err != nil {
		return fmt.Errorf("seccomp: %w", err)
	}
	mark("seccomp")
	return nil
}

// PodCaps are the capabilities the guest keeps in a Pod, which the
// container must therefore be granted: the native set without
// DAC_READ_SEARCH (DAC_OVERRIDE covers reads), so that a sandbox Pod fits
// the "baseline" Pod Security Standard.
func PodCaps() []harden.Cap {
	var out []harden.Cap
	for _, c := range keepCaps {
		if c != harden.CapDacReadSearch {
			out = append(out, c)
		}
	}
	return out
}

// podMemoryCgroup opens the container's memory group as the runtime
// mounted it (read-only) at /sys/fs/cgroup.
func podMemoryCgroup() (int, cgroup.Version, bool) {
	for _, c := range []struct {
		dir string
		ver cgroup.Version
	}{{"/sys/fs/cgroup/memory", cgroup.V1}, {"/sys/fs/cgroup", cgroup.V2}} {
		probe := "memory.oom_control"
		if c.ver == cgroup.V2 {
			probe = "memory.events"
		}
		if _, err := os.Stat(filepath.Join(c.dir, probe)); err != nil {
			continue
		}
		fd, err := unix.Open(c.dir, unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err == nil {
			return fd, c.ver, true
		}
	}
	return -1, 0, false
}

// podRoutes are the agent's routes and the Pod agent's own.
func (a *Agent) podRoutes() *rpc.Mux {
	m := a.routes()
	m.Handle(guestapi.RoutePodStats, rpc.Unary(guestapi.MaxHead, a.podStats))
	return m
}

func (a *Agent) podStats(*http.Request, *guestapi.Empty) (guestapi.PodStats, error) {
	return readPodStats(a.oomKills()), nil
}

// readPodStats reads the container's cgroup counters (v1, else v2).
func readPodStats(oom int64) guestapi.PodStats {
	s := guestapi.PodStats{MemoryBytes: -1, MemoryPeakBytes: -1, OOMKills: oom, Pids: -1, CPUUsageNs: -1, CPUThrottledNs: -1}
	num := func(p string) int64 {
		b, err := os.ReadFile(p)
		if err != nil {
			return -1
		}
		v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil {
			return -1
		}
		return v
	}
	field := func(p, key string) int64 {
		b, err := os.ReadFile(p)
		if err != nil {
			return -1
		}
		for _, l := range strings.Split(string(b), "\n") {
			if f := strings.Fields(l); len(f) == 2 && f[0] == key {
				v, _ := strconv.ParseInt(f[1], 10, 64)
				return v
			}
		}
		return -1
	}
	if _, err := os.Stat("/sys/fs/cgroup/memory/memory.usage_in_bytes"); err == nil {
		s.MemoryBytes = num("/sys/fs/cgroup/memory/memory.usage_in_bytes")
		s.MemoryPeakBytes = num("/sys/fs/cgroup/memory/memory.max_usage_in_bytes")
		s.Pids = num("/sys/fs/cgroup/pids/pids.current")
		s.CPUUsageNs = num("/sys/fs/cgroup/cpuacct/cpuacct.usage")
		if s.CPUUsageNs < 0 {
			s.CPUUsageNs = num("/sys/fs/cgroup/cpu,cpuacct/cpuacct.usage")
		}
		s.CPUThrottledNs = field("/sys/fs/cgroup/cpu/cpu.stat", "throttled_time")
		if s.CPUThrottledNs < 0 {
			s.CPUThrottledNs = field("/sys/fs/cgroup/cpu,cpuacct/cpu.stat", "throttled_time")
		}
		return s
	}
	s.MemoryBytes = num("/sys/fs/cgroup/memory.current")
	s.MemoryPeakBytes = num("/sys/fs/cgroup/memory.peak")
	s.Pids = num("/sys/fs/cgroup/pids.current")
	if v := field("/sys/fs/cgroup/cpu.stat", "usage_usec"); v >= 0 {
		s.CPUUsageNs = v * 1000
	}
	if v := field("/sys/fs/cgroup/cpu.stat", "throttled_usec"); v >= 0 {
		s.CPUThrottledNs = v * 1000
	}
	return s
}

// podFail reports a start failure in the Pod's termination message (the
// kube runtime shows it as the sandbox's failure reason) and the log.
func podFail(err error) int {
	msg := "paddock-guest: " + err.Error()
	_ = os.WriteFile("/dev/termination-log", []byte(msg), 0o644)
	fmt.Fprintln(os.Stderr, msg)
	return 1
}
