package jupyter

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"strconv"
)

// ConnInfo is a kernel's connection file: where its five sockets listen
// and the key its messages are signed with.
type ConnInfo struct {
	IP              string `json:"ip"`
	Transport       string `json:"transport"`
	ShellPort       int    `json:"shell_port"`
	IOPubPort       int    `json:"iopub_port"`
	StdinPort       int    `json:"stdin_port"`
	ControlPort     int    `json:"control_port"`
	HBPort          int    `json:"hb_port"`
	Key             string `json:"key"`
	SignatureScheme string `json:"signature_scheme"`
	KernelName      string `json:"kernel_name"`
}

// NewConnInfo picks five free TCP ports on 127.0.0.1 (the sandbox's own
// loopback when it runs in the sandbox) and a random 256-bit key.
//
// The ports are free when picked; the kernel binds them a moment later,
// so another process may take one first — the caller retries with new
// ports when the kernel fails to start.
func NewConnInfo() (ConnInfo, error) {
	var key [32]byte
	if _, err := rand.Read(key[:]); err != nil {
		return ConnInfo{}, err
	}
	ci := ConnInfo{
		IP:              "127.0.0.1",
		Transport:       "tcp",
		Key:             hex.EncodeToString(key[:]),
		SignatureScheme: "hmac-sha256",
	}
	// Hold all five listeners at once so that the five ports differ.
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			_ = l.Close()
		}
	}()
	ports := make([]int, 5)
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return ConnInfo{}, fmt.Errorf("pick a port: %w", err)
		}
		ls = append(ls, l)
		ports[i] = l.Addr().(*net.TCPAddr).Port
	}
	ci.ShellPort, ci.IOPubPort, ci.StdinPort, ci.ControlPort, ci.HBPort = ports[0], ports[1], ports[2], ports[3], ports[4]
	return ci, nil
}

// WriteFile writes the connection file to path, readable by its owner only
// (it holds the key that lets anyone run code in the kernel).
func (ci ConnInfo) WriteFile(path string) error {
	b, err := json.Marshal(ci)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

func (ci ConnInfo) endpoint(port int) string {
	return transportName + "://" + net.JoinHostPort(ci.IP, strconv.Itoa(port))
}
