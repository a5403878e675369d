//go:build linux

package kube_test

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/paddockhq/paddock/internal/runtime/kube"
	"github.com/paddockhq/paddock/internal/sandbox"
)

// TestCreateExecDelete: a sandbox is a Pod running the template's image
// with the guest as PID 1, reached without kubectl exec; its workloads
// have no capabilities and no API credentials; delete leaves no Pod and
// no Secret.
func TestCreateExecDelete(t *testing.T) {
	e := newEnv(t, nil)
	t0 := time.Now()
	sb := e.create(sandbox.Spec{})
	t.Logf("create took %v", time.Since(t0))
	ctx := context.Background()

	pod, err := e.c.Client.CoreV1().Pods(e.ns).Get(ctx, sb.ID, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pod.Labels[kube.LabelSandbox] != sb.ID || pod.Labels[kube.LabelTenant] != "acme" {
		t.Errorf("labels %v", pod.Labels)
	}
	if pod.Spec.Containers[0].Image != e.c.BusyboxImage {
		t.Errorf("image %s, want the template's", pod.Spec.Containers[0].Image)
	}

	res, out, stderr, err := e.exec(sb.ID, "", "/bin/sh", "-c", "echo hello; echo oops >&2; exit 3")
	if err != nil {
		t.Fatal(err)
	}
	if out != "hello\n" || stderr != "oops\n" || res.ExitCode != 3 {
		t.Errorf("exec: %q %q %d", out, stderr, res.ExitCode)
	}
	if got := e.sh(sb.ID, "cat /proc/1/cmdline | tr '\\0' ' '"); !strings.Contains(got, "paddock-guest pod") {
		t.Errorf("PID 1 is %q, want the guest", got)
	}
	if got := e.sh(sb.ID, "grep CapEff /proc/self/status"); !strings.HasSuffix(got, "0000000000000000") {
		t.Errorf("a root workload has capabilities: %s", got)
	}
	if got := e.sh(sb.ID, "ls /var/run/secrets/kubernetes.io 2>&1 || true"); !strings.Contains(got, "No such file") {
		t.Errorf("a service-account token is mounted: %q", got)
	}
	if got := e.sh(sb.ID, "ls -A /.paddock/creds 2>&1 || true"); got != "" && !strings.Contains(got, "Permission denied") {
		t.Errorf("the guest's credentials are visible to the workload: %q", got)
	}
	res, out, _, err = e.exec(sb.ID, "user", "id", "-u")
	if err != nil || strings.TrimSpace(out) != "1000" {
		t.Errorf("user exec: %q %v %+v", out, err, res)
	}

	if err := e.m.Delete(ctx, e.sc, sb.ID); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "Pod and Secret gone", func() error {
		if _, err := e.c.Client.CoreV1().Pods(e.ns).Get(ctx, sb.ID, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("pod: %v", err)
		}
		secs, err := e.c.Client.CoreV1().Secrets(e.ns).List(ctx, metav1.ListOptions{LabelSelector: kube.LabelSandbox + "=" + sb.ID})
		if err != nil || len(secs.Items) > 0 {
			return fmt.Errorf("secrets: %v %d", err, len(secs.Items))
		}
		return nil
	})
}

// TestFilesAndProcesses: the files and processes services work over the
// Pod network as over the native Unix socket.
func TestFilesAndProcesses(t *testing.T) {
	e := newEnv(t, nil)
	sb := e.create(sandbox.Spec{})
	ctx := context.Background()
	body := strings.Repeat("paddock on kube\n", 4096)
	if _, err := e.m.WriteFile(ctx, e.sc, sb.ID, sandbox.WriteRequest{Path: "/workspace/a.txt"}, strings.NewReader(body), int64(len(body))); err != nil {
		t.Fatal(err)
	}
	if got := e.sh(sb.ID, "wc -c < /workspace/a.txt"); got != fmt.Sprint(len(body)) {
		t.Errorf("file size in the sandbox %s, want %d", got, len(body))
	}
	r, err := e.m.ReadFile(ctx, e.sc, sb.ID, sandbox.ReadFileRequest{Path: "/workspace/a.txt"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(r.Body)
	r.Body.Close()
	if err != nil || string(got) != body {
		t.Errorf("read back %d bytes (%v)", len(got), err)
	}

	p, err := e.m.StartProcess(ctx, e.sc, sb.ID, sandbox.ProcessRequest{Cmd: []string{"sleep", "300"}})
	if err != nil {
		t.Fatal(err)
	}
	procs, err := e.m.Processes(ctx, e.sc, sb.ID)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, q := range procs {
		found = found || q.ID == p.ID
	}
	if !found {
		t.Errorf("started process %v not listed in %v", p.ID, procs)
	}
	if _, err := e.m.KillProcess(ctx, e.sc, sb.ID, p.ID); err != nil {
		t.Fatal(err)
	}
}

// TestLimits: the spec's CPU and memory are the Pod's limits and hold
// inside; an exec the kernel kills for memory is reported as such.
func TestLimits(t *testing.T) {
	e := newEnv(t, nil)
	sb := e.create(sandbox.Spec{CPU: 0.5, MemoryMB: 64})
	if got := e.sh(sb.ID, "cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us /sys/fs/cgroup/cpu/cpu.cfs_period_us | tr '\\n' ' '"); got != "50000 100000" {
		t.Errorf("cpu quota/period %q, want 50000 100000", got)
	}
	if got := e.sh(sb.ID, "cat /sys/fs/cgroup/memory/memory.limit_in_bytes"); got != fmt.Sprint(64<<20) {
		t.Errorf("memory limit %s", got)
	}
	// A shell variable of 200 MB in a 64 MB sandbox.
	res, _, _, err := e.exec(sb.ID, "", "/bin/sh", "-c", "x=$(head -c 200000000 /dev/zero | tr '\\0' a); echo ${#x}")
	if err != nil {
		t.Fatal(err)
	}
	if !res.OOMKilled {
		t.Errorf("memory hog not reported OOM-killed: %+v", res)
	}
	// The sandbox survives its workload's OOM kill.
	if got := e.sh(sb.ID, "echo alive"); got != "alive" {
		t.Errorf("after OOM: %q", got)
	}
	st, err := e.m.Stats(context.Background(), e.sc, sb.ID)
	if err != nil {
		t.Fatal(err)
	}
	if st.MemoryBytes <= 0 || st.OOMKills < 1 || st.CPUUsage <= 0 {
		t.Errorf("stats %+v", st)
	}
}

// TestPodDeletedBehindPaddocksBack: the sandbox shows failed, with the
// cluster's reason, and the failure is audited.
func TestPodDeletedBehindPaddocksBack(t *testing.T) {
	e := newEnv(t, nil)
	sb := e.create(sandbox.Spec{})
	ctx := context.Background()
	if err := e.c.Client.CoreV1().Pods(e.ns).Delete(ctx, sb.ID, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "sandbox failed", func() error {
		got, err := e.m.Get(ctx, e.sc, sb.ID)
		if err != nil {
			return err
		}
		if got.State != sandbox.StateFailed {
			return fmt.Errorf("state %s", got.State)
		}
		if !strings.Contains(got.Reason, "Pod was deleted") {
			t.Errorf("reason %q does not say the Pod was deleted", got.Reason)
		}
		return nil
	})
	eventually(t, 10*time.Second, "sandbox.fail audited", func() error {
		acts := e.auditActions(sb.ID)
		for _, a := range acts {
			if strings.HasPrefix(a, "sandbox.fail") {
				return nil
			}
		}
		return fmt.Errorf("audit has %v", acts)
	})
}

// TestRestartReattaches: a restart of Paddock finds its sandboxes' Pods
// and talks to them again; one whose Pod vanished meanwhile is cleaned up.
func TestRestartReattaches(t *testing.T) {
	e := newEnv(t, nil)
	a := e.create(sandbox.Spec{})
	b := e.create(sandbox.Spec{})
	e.sh(a.ID, "echo before > /workspace/mark")
	e.shutdown()
	ctx := context.Background()
	if err := e.c.Client.CoreV1().Pods(e.ns).Delete(ctx, b.ID, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.open()
	if got := e.sh(a.ID, "cat /workspace/mark"); got != "before" {
		t.Errorf("reattached sandbox lost its state: %q", got)
	}
	if _, err := e.m.Get(ctx, e.sc, b.ID); err == nil {
		t.Error("a sandbox whose Pod vanished during the restart is still listed")
	}
}

// TestFailuresCarryTheClustersReason: a missing image and an
// unschedulable Pod fail the create at once with what the cluster said,
// not with a timeout.
func TestFailuresCarryTheClustersReason(t *testing.T) {
	t.Run("image", func(t *testing.T) {
		e := newEnv(t, nil)
		e.image = e.c.Registry + "/does/not:exist"
		t0 := time.Now()
		_, err := e.m.Create(context.Background(), e.sc, sandbox.Spec{})
		if err == nil || !strings.Contains(err.Error(), "cannot pull image") {
			t.Fatalf("create with a missing image: %v", err)
		}
		if d := time.Since(t0); d > 60*time.Second {
			t.Errorf("took %v: that is a timeout, not the cluster's answer", d)
		}
	})
	t.Run("unschedulable", func(t *testing.T) {
		e := newEnv(t, func(o *kube.Options) { o.CPURequest.Set(1000) })
		_, err := e.m.Create(context.Background(), e.sc, sandbox.Spec{CPU: 2000})
		if err == nil || !strings.Contains(err.Error(), "cannot schedule") || !strings.Contains(err.Error(), "Insufficient cpu") {
			t.Fatalf("create of an unschedulable Pod: %v", err)
		}
	})
}

// TestNetworkPolicyIsolatesSandboxes: two sandboxes cannot reach each
// other (nor a plain Pod), while two plain Pods can — the positive
// control that the network works and only the policy stops it.
func TestNetworkPolicyIsolatesSandboxes(t *testing.T) {
	e := newEnv(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	server, err := e.c.RunPod(ctx, e.ns, "plain-server", nil, "nc", "-lk", "-p", "8080", "-e", "echo", "hi")
	if err != nil {
		t.Fatal(err)
	}
	client, err := e.c.RunPod(ctx, e.ns, "plain-client", nil, "sleep", "3600")
	if err != nil {
		t.Fatal(err)
	}
	// Positive control: plain Pods talk.
	eventually(t, 30*time.Second, "plain pod reaches plain pod", func() error {
		out, err := e.c.ExecPod(ctx, e.ns, client.Name, "nc", "-w", "2", server.Status.PodIP, "8080")
		if err != nil || !strings.Contains(string(out), "hi") {
			return fmt.Errorf("%v: %s", err, out)
		}
		return nil
	})
	a := e.create(sandbox.Spec{})
	b := e.create(sandbox.Spec{})
	if _, err := e.m.StartProcess(ctx, e.sc, b.ID, sandbox.ProcessRequest{Cmd: []string{"nc", "-lk", "-p", "8080", "-e", "echo", "hi"}}); err != nil {
		t.Fatal(err)
	}
	bIP := podIP(t, e, b.ID)
	for name, target := range map[string]string{"sandbox → sandbox": bIP, "sandbox → plain pod": server.Status.PodIP} {
		res, out, _, err := e.exec(a.ID, "", "nc", "-w", "2", target, "8080")
		if err != nil {
			t.Fatal(err)
		}
		if res.ExitCode == 0 || strings.Contains(out, "hi") {
			t.Errorf("%s: connected (%q)", name, out)
		}
	}
	// And a plain Pod cannot reach into a sandbox.
	out, err := e.c.ExecPod(ctx, e.ns, client.Name, "nc", "-w", "2", bIP, "8080")
	if err == nil || strings.Contains(string(out), "hi") {
		t.Errorf("plain pod → sandbox: connected (%q)", out)
	}
	if !strings.Contains(e.c.Ruleset(), bIP) {
		t.Errorf("the policy plugin's rules do not name the sandbox %s:\n%s", bIP, e.c.Ruleset())
	}
}

func podIP(t *testing.T, e *kenv, id string) string {
	t.Helper()
	p, err := e.c.Client.CoreV1().Pods(e.ns).Get(context.Background(), id, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p.Status.PodIP
}

// TestSandboxForIP: the egress identifies a sandbox by its Pod IP, and
// refuses the address of a Pod that is not one of its sandboxes.
func TestSandboxForIP(t *testing.T) {
	e := newEnv(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sb := e.create(sandbox.Spec{})
	// A Pod labelled like a sandbox, made behind Paddock's back: a forged
	// source.
	forged, err := e.c.RunPod(ctx, e.ns, "forged", map[string]string{kube.LabelManagedBy: "paddock",
		"app.kubernetes.io/component": "sandbox", kube.LabelInstance: "default", kube.LabelSandbox: "sb-forged"}, "sleep", "3600")
	if err != nil {
		t.Fatal(err)
	}
	plain, err := e.c.RunPod(ctx, e.ns, "plain", nil, "sleep", "3600")
	if err != nil {
		t.Fatal(err)
	}
	src, err := e.b.SandboxForIP(mustAddr(t, podIP(t, e, sb.ID)))
	if err != nil || src.Sandbox != sb.ID || src.Tenant != "acme" {
		t.Errorf("sandbox's own IP: %+v %v", src, err)
	}
	for name, ip := range map[string]string{"forged": forged.Status.PodIP, "plain": plain.Status.PodIP} {
		if src, err := e.b.SandboxForIP(mustAddr(t, ip)); err == nil {
			t.Errorf("%s pod's IP identified as sandbox %+v", name, src)
		}
	}
}

// TestRBACAndReachability: missing verbs are named at start, an
// unreachable API says so, and neither takes the caller down.
func TestRBACAndReachability(t *testing.T) {
	c := newEnv(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg, err := c.c.UserConfig("limited")
	if err != nil {
		t.Fatal(err)
	}
	// Everything but deleting Pods.
	if _, err := c.c.Kubectl(ctx, "-n", c.ns, "create", "role", "almost", "--verb=get,list,watch,create,update,patch",
		"--resource=pods,secrets,networkpolicies,events,pods/resize"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.c.Kubectl(ctx, "-n", c.ns, "create", "rolebinding", "almost", "--role=almost", "--user=limited"); err != nil {
		t.Fatal(err)
	}
	o := c.options()
	o.Config = cfg
	_, err = kube.New(ctx, o)
	if err == nil || !strings.Contains(err.Error(), "delete pods") || !strings.Contains(err.Error(), "delete secrets") {
		t.Errorf("missing verbs not named: %v", err)
	}
	o = c.options()
	bad := *o.Config
	bad.Host = "https://127.0.0.1:1"
	o.Config = &bad
	if _, err := kube.New(ctx, o); err == nil || !strings.Contains(err.Error(), "cannot reach the Kubernetes API") {
		t.Errorf("unreachable API: %v", err)
	}
}

func mustAddr(t *testing.T, s string) netip.Addr {
	t.Helper()
	a, err := netip.ParseAddr(s)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestTwentySandboxes: twenty sandboxes at once, none reaching another's
// listener, all reattached by a restart of Paddock halfway, and nothing
// left of them (Pods, Secrets, emptyDir volumes on the node) after delete.
func TestTwentySandboxes(t *testing.T) {
	const n = 20
	e := newEnv(t, nil)
	ctx := context.Background()
	ids := make([]string, n)
	errc := make(chan error, n)
	for i := range ids {
		go func(i int) {
			sb, err := e.m.Create(ctx, e.sc, sandbox.Spec{CPU: 0.1, MemoryMB: 64})
			ids[i] = sb.ID
			errc <- err
		}(i)
	}
	for range ids {
		if err := <-errc; err != nil {
			t.Fatalf("create: %v", err)
		}
	}
	ips := make([]string, n)
	for i, id := range ids {
		if _, err := e.m.StartProcess(ctx, e.sc, id, sandbox.ProcessRequest{Cmd: []string{"nc", "-lk", "-p", "8080", "-e", "echo", "hi"}}); err != nil {
			t.Fatal(err)
		}
		ips[i] = podIP(t, e, id)
	}
	e.shutdown()
	e.open()
	for i, id := range ids {
		next := ips[(i+1)%n]
		res, out, _, err := e.exec(id, "", "nc", "-w", "1", next, "8080")
		if err != nil {
			t.Fatalf("sandbox %d after the restart: %v", i, err)
		}
		if res.ExitCode == 0 || strings.Contains(out, "hi") {
			t.Errorf("sandbox %d reached sandbox %d's listener", i, (i+1)%n)
		}
	}
	for _, id := range ids {
		if err := e.m.Delete(ctx, e.sc, id); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 2*time.Minute, "no sandbox Pod, Secret or volume left", func() error {
		pods, err := e.c.Client.CoreV1().Pods(e.ns).List(ctx, metav1.ListOptions{LabelSelector: kube.LabelManagedBy + "=paddock"})
		if err != nil || len(pods.Items) > 0 {
			return fmt.Errorf("pods: %v %d", err, len(pods.Items))
		}
		secs, err := e.c.Client.CoreV1().Secrets(e.ns).List(ctx, metav1.ListOptions{LabelSelector: kube.LabelSandbox})
		if err != nil || len(secs.Items) > 0 {
			return fmt.Errorf("secrets: %v %d", err, len(secs.Items))
		}
		if dirs, err := e.c.OrphanPodDirs(ctx); err != nil || len(dirs) > 0 {
			return fmt.Errorf("pod volumes left on the node: %v %v", dirs, err)
		}
		return nil
	})
}
