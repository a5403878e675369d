package jupyter

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// startKernel starts Debian's ipykernel on a fresh connection file.
func startKernel(t *testing.T) ConnInfo {
	t.Helper()
	if err := exec.Command("/usr/bin/python3", "-c", "import ipykernel").Run(); err != nil {
		t.Skipf("needs /usr/bin/python3 with ipykernel (Debian python3-ipykernel): %v", err)
	}
	ci, err := NewConnInfo()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "kernel.json")
	if err := ci.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/usr/bin/python3", "-m", "ipykernel_launcher", "-f", path)
	cmd.Env = append(os.Environ(), "PYDEVD_DISABLE_FILE_VALIDATION=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return ci
}

func TestClientExecute(t *testing.T) {
	ci := startKernel(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := Dial(ctx, ci, DialOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var got []Message
	reply, err := c.Call(ctx, "shell", "execute_request", map[string]any{
		"code": "print('hi')\n1+1", "silent": false, "store_history": true,
		"user_expressions": map[string]any{}, "allow_stdin": false, "stop_on_error": true,
	}, func(m Message) { got = append(got, m) })
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Status string `json:"status"`
	}
	_ = json.Unmarshal(reply.Content, &st)
	if st.Status != "ok" {
		t.Fatalf("reply %s", reply.Content)
	}
	var types []string
	for _, m := range got {
		types = append(types, m.Header.MsgType)
	}
	t.Logf("iopub: %v", types)
	want := map[string]bool{"stream": false, "execute_result": false}
	for _, m := range got {
		if _, ok := want[m.Header.MsgType]; ok {
			want[m.Header.MsgType] = true
		}
	}
	for k, v := range want {
		if !v {
			t.Errorf("no %s message", k)
		}
	}
}
