package kubetest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"testing"
	"time"
)

// ErrUnavailable means this machine cannot run the cluster (not root,
// binaries not built, a package missing); tests skip with its message.
var ErrUnavailable = errors.New("kubetest: cannot run a Kubernetes cluster here")

// KubeVersion is the Kubernetes release tools/kube builds.
const KubeVersion = "v1.37.2"

// BinDir is where tools/kube/build.sh puts the binaries:
// $PADDOCK_KUBE_DIR/bin, default /var/cache/paddock/kube-v1.37.2/bin.
func BinDir() string {
	if d := os.Getenv("PADDOCK_KUBE_DIR"); d != "" {
		return d + "/bin"
	}
	return "/var/cache/paddock/kube-" + KubeVersion + "/bin"
}

var shared struct {
	once    sync.Once
	c       *Cluster
	err     error
	started bool
	mu      sync.Mutex
}

// Main runs the tests of a package that uses the cluster, then tears the
// cluster down; leftovers fail the run. It also serves as the janitor when
// the binary was re-executed as one.
func Main(m *testing.M) {
	if os.Getenv(janitorEnv) != "" {
		os.Exit(runJanitor())
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		s := <-sigs
		fmt.Fprintf(os.Stderr, "kubetest: %v: tearing the cluster down\n", s)
		closeShared()
		os.Exit(1)
	}()
	code := m.Run()
	if err := closeShared(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

func closeShared() error {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.c == nil {
		return nil
	}
	err := shared.c.Close()
	shared.c = nil
	return err
}

// Get returns the package's cluster, starting it on first use; it skips t
// when the machine cannot run one and fails it when the start fails.
func Get(t testing.TB) *Cluster {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: this test starts a Kubernetes cluster")
	}
	// Opt-in (make test-kube): the cluster needs the Kubernetes binaries
	// (~8.5 min to build cold) and a containerd with its CRI plugin, which
	// Debian's containerd on this machine kind does not serve (kubelet:
	// "unknown service runtime.v1.RuntimeService"); see docs/kubernetes.md.
	if os.Getenv("PADDOCK_KUBE_TESTS") != "1" {
		t.Skip("the Kubernetes cluster tests are opt-in: make test-kube (PADDOCK_KUBE_TESTS=1)")
	}
	shared.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
		c, err := Start(ctx, Options{Log: log})
		shared.mu.Lock()
		shared.c, shared.err = c, err
		shared.mu.Unlock()
		if err == nil {
			fmt.Fprintf(os.Stderr, "kubetest: cluster up: %s\n", c.Phases())
		}
	})
	if errors.Is(shared.err, ErrUnavailable) {
		t.Skip(shared.err)
	}
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.c == nil {
		t.Fatal("kubetest: the cluster was torn down")
	}
	return shared.c
}
