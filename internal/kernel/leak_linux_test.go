//go:build linux

package kernel

import (
	"runtime"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/kernel/codewire"
)

// Closing a supervisor leaves no goroutine behind (readers, pumps,
// watchers of every engine end with their processes).
func TestCloseLeavesNothing(t *testing.T) {
	needPython(t)
	needNode(t)
	needBash(t)
	before := runtime.NumGoroutine()
	for range 2 {
		s, err := New(Config{Cwd: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		for _, lang := range []string{"python", "javascript", "bash"} {
			mustOK(t, s, codewire.ExecuteRequest{Language: lang, Code: map[string]string{"python": "print(1)", "javascript": "console.log(1)", "bash": "echo 1"}[lang]})
		}
		s.Close()
	}
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > before+2 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before+2 {
		buf := make([]byte, 1<<20)
		t.Fatalf("%d goroutines before, %d after:\n%s", before, n, buf[:runtime.Stack(buf, true)])
	}
}
