package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// The guest is PID 1 of every sandbox and starts with it: it must stay a
// small program. Outside the standard library it may link exactly these
// (a package of the guest tree, or one of the listed modules); nothing of
// the server — no SQLite, store, API, MCP, E2B, browser automation,
// metrics or CLI.
var allowedGuestDeps = []string{
	"github.com/paddockhq/paddock/cmd/paddock-guest",
	"github.com/paddockhq/paddock/internal/guest",    // and its service packages
	"github.com/paddockhq/paddock/internal/guestapi", // the protocol
	"github.com/paddockhq/paddock/internal/errs",
	"github.com/paddockhq/paddock/internal/cgroup",
	"github.com/paddockhq/paddock/internal/harden",
	"github.com/paddockhq/paddock/internal/textcut", // cutting text at UTF-8 boundaries
	"golang.org/x/sys",                              // system calls
	"golang.org/x/net/bpf",                          // the seccomp program
	"github.com/creack/pty",                         // terminals
	"github.com/landlock-lsm/go-landlock",           // Landlock
	"kernel.org/pub/linux/libs/security/libcap/psx", // all-threads system calls
	// Code contexts: the kernels' supervisor, its Jupyter client and
	// codewire, over pure-Go ZeroMQ and what it links (errgroup; x/text
	// for its socket-type names).
	"github.com/paddockhq/paddock/internal/kernel",
	"github.com/go-zeromq/zmq4",
	"golang.org/x/sync/errgroup",
	"golang.org/x/text",
}

// Named so that a failure says plainly what crept in.
var forbiddenGuestDeps = []string{
	"modernc.org/sqlite", "database/sql", "github.com/paddockhq/paddock/internal/store",
	"github.com/paddockhq/paddock/internal/api", "github.com/paddockhq/paddock/internal/mcp",
	"github.com/paddockhq/paddock/internal/e2b", "github.com/paddockhq/paddock/internal/sandbox",
	"github.com/paddockhq/paddock/internal/kernel/e2bci", // the E2B wire is the host's

	"github.com/paddockhq/paddock/internal/runtime", "github.com/paddockhq/paddock/client",
	"github.com/chromedp", "github.com/prometheus", "github.com/spf13/cobra",
	"github.com/modelcontextprotocol", "go.opentelemetry.io", "google.golang.org/grpc",
}

func within(pkg, root string) bool { return pkg == root || strings.HasPrefix(pkg, root+"/") }

func TestGuestDepsAreLean(t *testing.T) {
	cmd := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "list", "-deps", "-f", "{{.ImportPath}} {{.Standard}}", ".")
	// As make guest builds it.
	cmd.Env = append(os.Environ(), "GOOS=linux", "CGO_ENABLED=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, std, _ := strings.Cut(line, " ")
		for _, f := range forbiddenGuestDeps {
			if within(pkg, f) {
				t.Errorf("the guest links %s (forbidden: it is the server's)", pkg)
			}
		}
		if std == "true" {
			continue
		}
		n++
		ok := false
		for _, a := range allowedGuestDeps {
			ok = ok || within(pkg, a)
		}
		if !ok {
			t.Errorf("the guest links %s, which is not in its allowed set", pkg)
		}
	}
	if n < 5 {
		t.Fatalf("go list found %d non-standard packages: the listing is broken\n%s", n, out)
	}
}
