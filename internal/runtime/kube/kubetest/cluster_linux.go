//go:build linux

package kubetest

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sync/errgroup"
	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Cluster is a running single-node cluster.
type Cluster struct {
	Dir        string // everything the cluster writes, but the fixed paths
	Kubeconfig string // admin (system:masters) kubeconfig
	Config     *rest.Config
	Client     kubernetes.Interface
	NodeName   string
	NodeIP     netip.Addr   // on the bridge; the node's InternalIP
	PodCIDR    netip.Prefix // pods get addresses here
	Registry   string       // host:port of the local registry (plain HTTP)
	// PauseImage and BusyboxImage are in the registry: the pod sandbox
	// image, and a static busybox with /bin/sh and a passwd.
	PauseImage   string
	BusyboxImage string
	// Timings are the start-up phases, for the logs and the notes.
	Timings []Phase

	log     *slog.Logger
	bins    string
	net     *hostNet
	rec     *record
	lock    *os.File
	sp      *spawner
	janitor *exec.Cmd
	jpipe   *os.File
	pol     *enforcer
	pki     *pki
	apiURL  string

	mu      sync.Mutex
	daemons map[string]*daemon
	closed  bool
}

// Phase is one timed step of Start.
type Phase struct {
	Name string
	D    time.Duration
}

// Options configure Start.
type Options struct {
	Log *slog.Logger
	// BinDir holds the Kubernetes binaries; default BinDir().
	BinDir string
	// ReadyTimeout bounds each daemon's start (default 3 minutes: the
	// machine is shared).
	ReadyTimeout time.Duration
}

// PodPidsLimit is the kubelet's per-pod process ceiling on this node.
const PodPidsLimit = 4096

// Start builds the cluster. On error everything already started is torn
// down again.
func Start(ctx context.Context, o Options) (_ *Cluster, err error) {
	if o.BinDir == "" {
		o.BinDir = BinDir()
	}
	if err := Available(o.BinDir); err != nil {
		return nil, err
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.ReadyTimeout == 0 {
		o.ReadyTimeout = 3 * time.Minute
	}
	t0 := time.Now()
	c := &Cluster{log: o.Log, bins: o.BinDir, daemons: map[string]*daemon{}}
	last := t0
	mark := func(name string) {
		now := time.Now()
		c.Timings = append(c.Timings, Phase{name, now.Sub(last)})
		last = now
	}
	if err := c.acquire(ctx); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			if probs := c.teardown(); len(probs) > 0 {
				err = fmt.Errorf("%w (and teardown left: %s)", err, strings.Join(probs, "; "))
			}
		}
	}()
	mark("lock")
	suffix := randHex(3)
	c.Dir, err = os.MkdirTemp("", "pkt-"+suffix+"-")
	if err != nil {
		return nil, err
	}
	c.rec = &record{Owner: os.Getpid(), Dir: c.Dir, CgroupRoot: "/paddock-kubetest-" + suffix,
		Bridge: "pkt" + suffix, Table: "paddock_kubetest_" + suffix, Fixed: snapshotFixed()}
	if err := c.rec.save(); err != nil {
		return nil, fmt.Errorf("kubetest: state file: %w", err)
	}
	if err := c.startJanitor(); err != nil {
		return nil, err
	}
	c.sp = newSpawner()
	for _, d := range []string{"logs", "pki", "etcd", "containerd", "cni/net.d", "cni/ipam", "kubelet", "registry", "images"} {
		if err := os.MkdirAll(filepath.Join(c.Dir, d), 0o700); err != nil {
			return nil, err
		}
	}
	// etcd on tmpfs: fsyncs on a shared, busy disk stall the apiserver.
	if err := unix.Mount("kubetest-etcd", filepath.Join(c.Dir, "etcd"), "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "size=1g,mode=0700"); err != nil {
		return nil, fmt.Errorf("kubetest: tmpfs for etcd: %w", err)
	}
	if c.net, err = setupNet(suffix); err != nil {
		return nil, fmt.Errorf("kubetest: pod network: %w", err)
	}
	c.NodeIP, c.PodCIDR = c.net.NodeIP, c.net.PodCIDR
	c.NodeName = "kubetest-" + suffix
	if err := mkCgroupRoot(c.rec.CgroupRoot); err != nil {
		return nil, fmt.Errorf("kubetest: cgroup root: %w", err)
	}
	mark("host")

	p, err := newPKI(filepath.Join(c.Dir, "pki"))
	if err != nil {
		return nil, fmt.Errorf("kubetest: pki: %w", err)
	}
	c.pki = p
	ports, err := freePorts(8)
	if err != nil {
		return nil, err
	}
	etcdPort, etcdPeer, apiPort, cmPort, schedPort, kubeletPort, healthz, regPort :=
		ports[0], ports[1], ports[2], ports[3], ports[4], ports[5], ports[6], ports[7]
	c.Registry = "127.0.0.1:" + strconv.Itoa(regPort)
	c.PauseImage = c.Registry + "/kubetest/pause:1"
	c.BusyboxImage = c.Registry + "/kubetest/busybox:1"
	apiURL := "https://" + netip.AddrPortFrom(c.NodeIP, uint16(apiPort)).String()
	c.apiURL = apiURL
	svcIP := c.net.SvcCIDR.Addr().Next()
	apiCert, apiKey, err := p.issue(certSpec{name: "apiserver", cn: "kube-apiserver", server: true,
		dns: []string{"kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local", "localhost"},
		ips: []net.IP{c.NodeIP.AsSlice(), svcIP.AsSlice(), net.IPv4(127, 0, 0, 1)}})
	if err != nil {
		return nil, err
	}
	kubeletSrv, kubeletSrvKey, err := p.issue(certSpec{name: "kubelet-serving", cn: c.NodeName, server: true,
		dns: []string{c.NodeName}, ips: []net.IP{c.NodeIP.AsSlice()}})
	if err != nil {
		return nil, err
	}
	saPub, saKey, err := p.serviceAccountKey()
	if err != nil {
		return nil, err
	}
	kcfg := func(name, cn string, orgs ...string) (string, error) {
		cert, key, err := p.issue(certSpec{name: name, cn: cn, orgs: orgs, client: true})
		if err != nil {
			return "", err
		}
		path := filepath.Join(c.Dir, name+".kubeconfig")
		return path, kubeconfig(path, apiURL, p.CAFile, cert, key)
	}
	if c.Kubeconfig, err = kcfg("admin", "kubetest-admin", "system:masters"); err != nil {
		return nil, err
	}
	kubeletKC, err := kcfg("kubelet", "system:node:"+c.NodeName, "system:nodes")
	if err != nil {
		return nil, err
	}
	cmKC, err := kcfg("controller-manager", "system:kube-controller-manager")
	if err != nil {
		return nil, err
	}
	schedKC, err := kcfg("scheduler", "system:kube-scheduler")
	if err != nil {
		return nil, err
	}
	apiClientCert, apiClientKey, err := p.issue(certSpec{name: "apiserver-kubelet-client", cn: "kube-apiserver-kubelet-client", client: true})
	if err != nil {
		return nil, err
	}
	mark("pki")

	// etcd, containerd and the registry need nothing from each other.
	ctrdDir := filepath.Join(c.Dir, "containerd")
	ctrdSock := filepath.Join(c.Dir, "containerd.sock")
	ctrdConf := filepath.Join(ctrdDir, "config.toml")
	if err := os.WriteFile(ctrdConf, []byte(containerdConfig(ctrdDir, ctrdSock, filepath.Join(c.Dir, "cni/net.d"), c.Registry, c.PauseImage)), 0o600); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(c.Dir, "cni/net.d/10-kubetest.conflist"), []byte(cniConfig(c.net, filepath.Join(c.Dir, "cni/ipam"))), 0o600); err != nil {
		return nil, err
	}
	regConf := filepath.Join(c.Dir, "registry.yml")
	if err := os.WriteFile(regConf, []byte(registryConfig(c.Registry, filepath.Join(c.Dir, "registry"))), 0o600); err != nil {
		return nil, err
	}
	etcdURL := "http://127.0.0.1:" + strconv.Itoa(etcdPort)
	peerURL := "http://127.0.0.1:" + strconv.Itoa(etcdPeer)
	if err := c.run("etcd", nil, append([]string{"etcd"}, joinFlags("name", "kubetest", "data-dir", filepath.Join(c.Dir, "etcd", "data"),
		"listen-client-urls", etcdURL, "advertise-client-urls", etcdURL, "listen-peer-urls", peerURL,
		"initial-advertise-peer-urls", peerURL, "initial-cluster", "kubetest="+peerURL, "log-level", "warn")...)...); err != nil {
		return nil, err
	}
	if err := c.run("containerd", nil, "containerd", "--config", ctrdConf, "--log-level", "warn"); err != nil {
		return nil, err
	}
	if err := c.run("registry", nil, "docker-registry", "serve", regConf); err != nil {
		return nil, err
	}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		return c.daemon("etcd").waitReady(gctx, o.ReadyTimeout, func(ctx context.Context) error {
			return httpOK(ctx, http.DefaultClient, etcdURL+"/health")
		})
	})
	g.Go(func() error {
		return c.daemon("containerd").waitReady(gctx, o.ReadyTimeout, func(ctx context.Context) error {
			conn, err := (&net.Dialer{}).DialContext(ctx, "unix", ctrdSock)
			if err == nil {
				conn.Close()
			}
			return err
		})
	})
	g.Go(func() error {
		if err := c.daemon("registry").waitReady(gctx, o.ReadyTimeout, func(ctx context.Context) error {
			return httpOK(ctx, http.DefaultClient, "http://"+c.Registry+"/v2/")
		}); err != nil {
			return err
		}
		return c.pushBaseImages(gctx)
	})
	if err := g.Wait(); err != nil {
		return nil, fmt.Errorf("kubetest: %w", err)
	}
	mark("etcd+containerd+registry+images")

	apiArgs := append([]string{filepath.Join(c.bins, "kube-apiserver")}, joinFlags(
		"etcd-servers", etcdURL, "bind-address", c.NodeIP.String(), "secure-port", strconv.Itoa(apiPort),
		"advertise-address", c.NodeIP.String(), "service-cluster-ip-range", c.net.SvcCIDR.String(),
		"client-ca-file", p.CAFile, "tls-cert-file", apiCert, "tls-private-key-file", apiKey,
		"service-account-issuer", "https://kubernetes.default.svc.cluster.local",
		"service-account-key-file", saPub, "service-account-signing-key-file", saKey,
		"authorization-mode", "Node,RBAC", "kubelet-client-certificate", apiClientCert, "kubelet-client-key", apiClientKey,
		"kubelet-preferred-address-types", "InternalIP", "profiling", "false", "cert-dir", filepath.Join(c.Dir, "apiserver"),
		"v", "1")...)
	if err := c.run("kube-apiserver", nil, apiArgs...); err != nil {
		return nil, err
	}
	if c.Config, err = clientcmd.BuildConfigFromFlags("", c.Kubeconfig); err != nil {
		return nil, err
	}
	c.Config.QPS, c.Config.Burst = 200, 400
	if c.Client, err = kubernetes.NewForConfig(c.Config); err != nil {
		return nil, err
	}
	if err := c.daemon("kube-apiserver").waitReady(ctx, o.ReadyTimeout, func(ctx context.Context) error {
		body, err := c.Client.CoreV1().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		if err != nil {
			return fmt.Errorf("%v: %s", err, body)
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("kubetest: %w", err)
	}
	mark("apiserver")

	if err := c.run("kube-controller-manager", nil, append([]string{filepath.Join(c.bins, "kube-controller-manager")}, joinFlags(
		"kubeconfig", cmKC, "authentication-kubeconfig", cmKC, "authorization-kubeconfig", cmKC,
		"bind-address", "127.0.0.1", "secure-port", strconv.Itoa(cmPort), "cert-dir", filepath.Join(c.Dir, "controller-manager"),
		"service-account-private-key-file", saKey, "root-ca-file", p.CAFile, "use-service-account-credentials", "false",
		"leader-elect", "false", "profiling", "false", "v", "1")...)...); err != nil {
		return nil, err
	}
	if err := c.run("kube-scheduler", nil, append([]string{filepath.Join(c.bins, "kube-scheduler")}, joinFlags(
		"kubeconfig", schedKC, "authentication-kubeconfig", schedKC, "authorization-kubeconfig", schedKC,
		"bind-address", "127.0.0.1", "secure-port", strconv.Itoa(schedPort), "cert-dir", filepath.Join(c.Dir, "scheduler"),
		"leader-elect", "false", "profiling", "false", "v", "1")...)...); err != nil {
		return nil, err
	}
	resolv := filepath.Join(c.Dir, "resolv.conf")
	if err := os.WriteFile(resolv, []byte("# kubetest: pods have no resolver unless a test gives one\n"), 0o644); err != nil {
		return nil, err
	}
	kubeletDir := filepath.Join(c.Dir, "kubelet")
	kubeletConf := filepath.Join(c.Dir, "kubelet.yaml")
	if err := os.WriteFile(kubeletConf, []byte(kubeletConfig(c.Dir, p.CAFile, kubeletSrv, kubeletSrvKey, ctrdSock,
		c.rec.CgroupRoot, resolv, c.net, kubeletPort, healthz)), 0o600); err != nil {
		return nil, err
	}
	if err := c.run("kubelet", nil, filepath.Join(c.bins, "kubelet"), "--config="+kubeletConf, "--kubeconfig="+kubeletKC,
		"--root-dir="+kubeletDir, "--node-ip="+c.NodeIP.String(), "--hostname-override="+c.NodeName, "--v=1"); err != nil {
		return nil, err
	}
	insecure := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} // health endpoints only
	g, gctx = errgroup.WithContext(ctx)
	g.Go(func() error {
		return c.daemon("kube-controller-manager").waitReady(gctx, o.ReadyTimeout, func(ctx context.Context) error {
			return httpOK(ctx, insecure, "https://127.0.0.1:"+strconv.Itoa(cmPort)+"/healthz")
		})
	})
	g.Go(func() error {
		return c.daemon("kube-scheduler").waitReady(gctx, o.ReadyTimeout, func(ctx context.Context) error {
			return httpOK(ctx, insecure, "https://127.0.0.1:"+strconv.Itoa(schedPort)+"/healthz")
		})
	})
	g.Go(func() error {
		return c.daemon("kubelet").waitReady(gctx, o.ReadyTimeout, func(ctx context.Context) error {
			n, err := c.Client.CoreV1().Nodes().Get(ctx, c.NodeName, metav1.GetOptions{})
			if err != nil {
				return err
			}
			for _, cond := range n.Status.Conditions {
				if cond.Type == corev1.NodeReady {
					if cond.Status == corev1.ConditionTrue {
						return nil
					}
					return fmt.Errorf("node not ready: %s: %s", cond.Reason, cond.Message)
				}
			}
			return errors.New("node has no Ready condition yet")
		})
	})
	g.Go(func() error {
		var err error
		c.pol, err = startEnforcer(c.Client, c.net, c.log)
		return err
	})
	if err := g.Wait(); err != nil {
		return nil, fmt.Errorf("kubetest: %w", err)
	}
	mark("controllers+kubelet+node")
	c.log.Info("kubetest: cluster up", "took", time.Since(t0).Round(time.Millisecond), "phases", c.Phases())
	return c, nil
}

// Phases formats Timings.
func (c *Cluster) Phases() string {
	var b strings.Builder
	for _, p := range c.Timings {
		fmt.Fprintf(&b, "%s=%s ", p.Name, p.D.Round(time.Millisecond))
	}
	return strings.TrimSpace(b.String())
}

// run starts a daemon; argv[0] is looked up in PATH unless absolute.
func (c *Cluster) run(name string, env []string, argv ...string) error {
	if !filepath.IsAbs(argv[0]) {
		p, err := exec.LookPath(argv[0])
		if err != nil {
			return fmt.Errorf("kubetest: %s: %w", name, err)
		}
		argv[0] = p
	}
	d, err := c.sp.start(filepath.Join(c.Dir, "logs"), name, env, argv...)
	if err != nil {
		return fmt.Errorf("kubetest: %w", err)
	}
	c.mu.Lock()
	c.daemons[name] = d
	c.mu.Unlock()
	return nil
}

func (c *Cluster) daemon(name string) *daemon {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.daemons[name]
}

// Log returns the last lines of a daemon's log (kubelet, containerd,
// kube-apiserver, ...), for test failure messages.
func (c *Cluster) Log(name string, lines int) string {
	if d := c.daemon(name); d != nil {
		return d.tail(lines)
	}
	return ""
}

// Ruleset returns the nftables rules the network-policy plugin enforces.
func (c *Cluster) Ruleset() string {
	if c.pol == nil {
		return ""
	}
	return c.pol.ruleset()
}

// Kubectl runs kubectl against the cluster.
func (c *Cluster) Kubectl(ctx context.Context, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, c.KubectlPath(), append([]string{"--kubeconfig=" + c.Kubeconfig}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return out, fmt.Errorf("kubectl %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return out, nil
}

// KubectlPath is the kubectl binary built with the cluster.
func (c *Cluster) KubectlPath() string { return filepath.Join(c.bins, "kubectl") }

// Namespace creates namespace name and waits until pods can be created in
// it (its default service account exists).
func (c *Cluster) Namespace(ctx context.Context, name string) error {
	_, err := c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	for {
		if _, err := c.Client.CoreV1().ServiceAccounts(name).Get(ctx, "default", metav1.GetOptions{}); err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("namespace %s has no default service account: %w", name, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// UserConfig returns a client configuration for user name in groups,
// authenticated by a client certificate of the cluster's CA: what RBAC
// lets it do is whatever the test binds to it.
func (c *Cluster) UserConfig(name string, groups ...string) (*rest.Config, error) {
	cert, key, err := c.pki.issue(certSpec{name: "user-" + randHex(4), cn: name, orgs: groups, client: true})
	if err != nil {
		return nil, err
	}
	return &rest.Config{Host: c.apiURL, TLSClientConfig: rest.TLSClientConfig{CAFile: c.pki.CAFile, CertFile: cert, KeyFile: key},
		QPS: 100, Burst: 200}, nil
}

// StopDaemon stops one daemon (tests of what Paddock does when the
// control plane goes away); StartAgain is not offered: a stopped cluster
// is torn down by Close.
func (c *Cluster) StopDaemon(name string) {
	c.daemon(name).stop(5 * time.Second)
}

// Close tears the cluster down and returns what it could not remove (nil
// when nothing is left).
func (c *Cluster) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	c.mu.Unlock()
	if probs := c.teardown(); len(probs) > 0 {
		return errors.New("kubetest teardown: " + strings.Join(probs, "; "))
	}
	return nil
}

// teardown stops daemons in order (kubelet, pods, containerd, the control
// plane), then removes everything the record names, then checks.
func (c *Cluster) teardown() []string {
	if c.pol != nil {
		c.pol.close()
	}
	var probs []string
	if c.rec != nil {
		c.daemon("kubelet").stop(5 * time.Second)
		killCgroupTree(c.rec.CgroupRoot, 10*time.Second)
		for _, n := range []string{"containerd", "kube-scheduler", "kube-controller-manager", "kube-apiserver", "etcd", "registry"} {
			c.daemon(n).stop(5 * time.Second)
		}
		probs = c.rec.cleanup()
		if left := c.rec.leftovers(); len(left) > 0 {
			probs = append(probs, "left behind: "+strings.Join(left, "; "))
		}
		if len(probs) == 0 {
			_ = os.Remove(stateFile)
		}
	}
	if c.sp != nil {
		c.sp.close()
	}
	c.stopJanitor()
	c.release()
	return probs
}

// acquire takes the host-wide lock: kubelet and containerd write fixed
// paths, so two clusters (two test packages) never run at once. A state
// file left by a cluster whose process died is cleaned up first.
func (c *Cluster) acquire(ctx context.Context) error {
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(lockFile, os.O_CREATE|os.O_RDWR|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return err
	}
	for {
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err == nil {
			break
		} else if !errors.Is(err, unix.EWOULDBLOCK) {
			f.Close()
			return fmt.Errorf("kubetest: lock %s: %w", lockFile, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return fmt.Errorf("kubetest: another cluster holds %s: %w", lockFile, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
	c.lock = f
	if r, err := loadRecord(); err == nil {
		c.log.Warn("kubetest: removing the leftovers of a cluster whose process died", "dir", r.Dir, "owner", r.Owner)
		if probs := r.cleanup(); len(probs) > 0 {
			c.release()
			return fmt.Errorf("kubetest: leftovers of an earlier cluster cannot be removed: %s", strings.Join(probs, "; "))
		}
		_ = os.Remove(stateFile)
	} else if !errors.Is(err, os.ErrNotExist) {
		c.release()
		return err
	}
	// A kubelet of someone else would fight ours over the fixed paths.
	for _, p := range listProcs() {
		if p.comm == "kubelet" {
			c.release()
			return fmt.Errorf("%w: a kubelet not started by kubetest runs on this machine (pid %d)", ErrUnavailable, p.pid)
		}
	}
	return nil
}

func (c *Cluster) release() {
	if c.lock != nil {
		c.lock.Close()
		c.lock = nil
	}
}

func mkCgroupRoot(root string) error {
	for _, h := range cgroupHierarchies() {
		if h == "/sys/fs/cgroup" {
			continue // unified hierarchy of a v2 host: kubelet makes its own
		}
		d := filepath.Join(h, root)
		if err := os.Mkdir(d, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			return err
		}
		// A new v1 cpuset starts with no CPUs and no memory nodes.
		for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
			if b, err := os.ReadFile(filepath.Join(h, f)); err == nil {
				if err := os.WriteFile(filepath.Join(d, f), b, 0); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var out []int
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		out = append(out, l.Addr().(*net.TCPAddr).Port)
	}
	return out, nil
}

func httpOK(ctx context.Context, hc *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	return nil
}
