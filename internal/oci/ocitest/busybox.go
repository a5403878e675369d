package ocitest

import (
	"os"
	"os/exec"
	"testing"
)

// Busybox is a small real userland layer: the static busybox with its
// common applets in bin/ and a root-only account database; extra files
// are added. It skips the test when busybox is not installed
// (apt-get install busybox-static).
func Busybox(t testing.TB, extra map[string]File) []byte {
	t.Helper()
	bb, err := exec.LookPath("busybox")
	if err != nil {
		t.Skip("busybox not installed (apt-get install busybox-static)")
	}
	body, err := os.ReadFile(bb)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]File{
		"bin/":        {Dir: true},
		"bin/busybox": {Body: string(body), Mode: 0o755},
		"etc/":        {Dir: true},
		"etc/passwd":  {Body: "root:x:0:0:root:/root:/bin/sh\n"},
		"etc/group":   {Body: "root:x:0:\n"},
	}
	for _, a := range []string{"sh", "id", "pwd", "env", "cat", "ls", "echo", "true", "false", "sleep", "test", "touch",
		"rm", "nc", "httpd", "wget", "mkdir", "cp", "chmod", "chown", "grep", "sed", "head", "wc"} {
		files["bin/"+a] = File{Link: "busybox"}
	}
	for k, v := range extra {
		files[k] = v
	}
	return LayerTar(t, files)
}
