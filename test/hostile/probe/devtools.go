//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/coder/websocket"
)

// A hostile "browser": what a sandbox's root puts where Chromium was. It
// answers DevTools as Chromium would (DevToolsActivePort, /json/version,
// the browser WebSocket) but every reply, and an unsolicited event on
// each connection, is a message of args' size in MiB (default 90). It
// keeps its counts in <user-data-dir>/fake-devtools.json: messages and
// bytes it tried to send and the bytes the kernel took from it.
func init() {
	ops["fake-devtools"] = fakeDevtools
}

// fakeStats is what the fake browser wrote.
type fakeStats struct {
	Conns            int64 `json:"conns"`
	MessagesTried    int64 `json:"messages_tried"`
	MessagesComplete int64 `json:"messages_complete"`
	BytesTried       int64 `json:"bytes_tried"`
	BytesWritten     int64 `json:"bytes_written"` // to the sockets
}

type countingConn struct {
	net.Conn
	n *atomic.Int64
}

func (c countingConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.n.Add(int64(n))
	return n, err
}

type countingListener struct {
	net.Listener
	n *atomic.Int64
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return countingConn{c, l.n}, nil
}

func fakeDevtools(args []string) report {
	dir, mib := "", 90
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--user-data-dir="); ok {
			dir = v
		}
		if v, ok := strings.CutPrefix(a, "--fake-mib="); ok {
			fmt.Sscan(v, &mib)
		}
	}
	if dir == "" {
		return report{Detail: "no --user-data-dir"}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return result(err, "mkdir")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return result(err, "listen")
	}
	const id = "0123456789ABCDEF0123456789ABCDEF"
	port := ln.Addr().(*net.TCPAddr).Port
	pad := bytes.Repeat([]byte("A"), mib<<20) // one copy: the sandbox has a memory limit
	var st fakeStats
	var written atomic.Int64
	var mu sync.Mutex
	save := func(f func(*fakeStats)) {
		mu.Lock()
		defer mu.Unlock()
		f(&st)
		st.BytesWritten = written.Load()
		b, _ := json.Marshal(st)
		_ = os.WriteFile(filepath.Join(dir, "fake-devtools.json.tmp"), b, 0o644)
		_ = os.Rename(filepath.Join(dir, "fake-devtools.json.tmp"), filepath.Join(dir, "fake-devtools.json"))
	}
	save(func(*fakeStats) {})
	// send writes one huge message: head, the pad, tail.
	send := func(ctx context.Context, c *websocket.Conn, head string) error {
		save(func(s *fakeStats) { s.MessagesTried++; s.BytesTried += int64(len(head) + len(pad) + 3) })
		w, err := c.Writer(ctx, websocket.MessageText)
		if err != nil {
			return err
		}
		for _, p := range [][]byte{[]byte(head), pad, []byte(`"}}`)} {
			if _, err := w.Write(p); err != nil {
				return err
			}
		}
		if err := w.Close(); err != nil {
			return err
		}
		save(func(s *fakeStats) { s.MessagesComplete++ })
		return nil
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/json/version", func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]string{"Browser": "Chrome/999.0.0.0", "Protocol-Version": "1.3",
			"webSocketDebuggerUrl": fmt.Sprintf("ws://127.0.0.1:%d/devtools/browser/%s", port, id)})
	})
	mux.HandleFunc("/devtools/", func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true, CompressionMode: websocket.CompressionDisabled})
		if err != nil {
			return
		}
		defer c.CloseNow()
		save(func(s *fakeStats) { s.Conns++ })
		ctx := r.Context()
		if send(ctx, c, `{"method":"Target.targetInfoChanged","params":{"pad":"`) != nil {
			return
		}
		for {
			_, data, err := c.Read(ctx)
			if err != nil {
				return
			}
			var m struct {
				ID        int64  `json:"id"`
				SessionID string `json:"sessionId"`
			}
			if json.Unmarshal(data, &m) != nil || m.ID == 0 {
				continue
			}
			if send(ctx, c, fmt.Sprintf(`{"id":%d,"result":{"pad":"`, m.ID)) != nil {
				return
			}
		}
	})
	if err := os.WriteFile(filepath.Join(dir, "DevToolsActivePort"), fmt.Appendf(nil, "%d\n/devtools/browser/%s\n", port, id), 0o644); err != nil {
		return result(err, "DevToolsActivePort")
	}
	return result(http.Serve(countingListener{ln, &written}, mux), "serve")
}
