//go:build linux

// Command probe performs one hostile action and reports how the kernel
// answered, as one JSON line: {"op":"bpf","ok":false,"errno":"EPERM"}.
//
// The hostile suite runs the same probe twice: natively, as a child of the
// test (the positive control: the action must succeed there, or reach the
// kernel with a different errno), and inside a sandbox through the API
// (the action must fail). It is deliberately small and static
// (CGO_ENABLED=0) so that it can be uploaded into a sandbox.
package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// report is what the probe prints.
type report struct {
	Op     string `json:"op"`
	OK     bool   `json:"ok"`
	Errno  string `json:"errno,omitempty"`
	Detail string `json:"detail,omitempty"`
	Count  int    `json:"count,omitempty"`
}

func main() {
	// Namespace changes (unshare, setns) apply to the calling thread.
	runtime.LockOSThread()
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: probe OP [ARG...]")
		os.Exit(2)
	}
	op, args := os.Args[1], os.Args[2:]
	f, ok := ops[op]
	if !ok {
		fmt.Fprintf(os.Stderr, "probe: unknown op %q\n", op)
		os.Exit(2)
	}
	r := f(args)
	r.Op = op
	b, _ := json.Marshal(r)
	fmt.Println(string(b))
}

// result turns an error into a report.
func result(err error, detail string) report {
	if err == nil {
		return report{OK: true, Detail: detail}
	}
	r := report{Detail: err.Error()}
	var en syscall.Errno
	if errors.As(err, &en) {
		r.Errno = unix.ErrnoName(en)
	}
	return r
}

func intArg(args []string, i, def int) int {
	if len(args) > i {
		if n, err := strconv.Atoi(args[i]); err == nil {
			return n
		}
	}
	return def
}

var ops = map[string]func([]string) report{
	// A new user namespace: "root" over fresh namespaces, the first step of
	// most unprivileged kernel exploits (CVE-2022-0185).
	// (A Go process has threads, and unshare(CLONE_NEWUSER) needs a single
	// thread: start a child in a new one, as clone(2) does.)
	"userns": func([]string) report {
		pid, err := syscall.ForkExec("/proc/self/exe", []string{"probe", "noop"},
			&syscall.ProcAttr{Sys: &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER}})
		if err != nil {
			return result(err, "clone")
		}
		var ws syscall.WaitStatus
		_, _ = syscall.Wait4(pid, &ws, 0, nil)
		return result(nil, fmt.Sprintf("child exited %d", ws.ExitStatus()))
	},
	"noop": func([]string) report { return report{OK: true} },
	// vsock is not network-namespaced: bind and listen on a vsock port
	// (natively the port is then taken for the whole host).
	"vsock-bind": func(args []string) report {
		fd, err := unix.Socket(unix.AF_VSOCK, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return result(err, "socket")
		}
		defer unix.Close(fd)
		port := uint32(intArg(args, 0, 40404))
		if err := unix.Bind(fd, &unix.SockaddrVM{CID: unix.VMADDR_CID_ANY, Port: port}); err != nil {
			return result(err, "bind")
		}
		return result(unix.Listen(fd, 1), "listen")
	},
	// socket DOMAIN TYPE PROTO: open one socket of a family.
	"socket": func(args []string) report {
		fd, err := unix.Socket(intArg(args, 0, -1), intArg(args, 1, unix.SOCK_STREAM)|unix.SOCK_CLOEXEC, intArg(args, 2, 0))
		if err != nil {
			return result(err, "socket")
		}
		unix.Close(fd)
		return result(nil, "opened")
	},
	// A mount in a private mount namespace (natively the namespace keeps
	// the host's mounts untouched).
	"mount": func([]string) report {
		if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
			// Inside a sandbox this needs CAP_SYS_ADMIN: try the mount on the
			// current namespace anyway, which is what an attacker would do.
			return result(unix.Mount("none", "/tmp", "tmpfs", 0, ""), "unshare: "+err.Error())
		}
		if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
			return result(err, "make-private")
		}
		return result(unix.Mount("none", "/tmp", "tmpfs", 0, "size=1m"), "")
	},
	// ptrace attach to a pid (the guest agent is pid 1 of the sandbox).
	"ptrace": func(args []string) report {
		pid := intArg(args, 0, 1)
		if err := unix.PtraceSeize(pid); err != nil {
			return result(err, "")
		}
		_ = unix.PtraceDetach(pid)
		return result(nil, "attached")
	},
	// io_uring bypasses seccomp for every operation it carries.
	"iouring": func([]string) report {
		var params [120]byte // struct io_uring_params
		fd, _, en := unix.Syscall(unix.SYS_IO_URING_SETUP, 4, uintptr(unsafe.Pointer(&params[0])), 0)
		if en != 0 {
			return result(en, "")
		}
		unix.Close(int(fd))
		return result(nil, "")
	},
	// bpf: verifier bugs are a classic escalation (CVE-2021-3490).
	"bpf": func([]string) report {
		// union bpf_attr for BPF_MAP_CREATE: type, key size, value size, max entries.
		attr := [4]uint32{2 /* BPF_MAP_TYPE_ARRAY */, 4, 4, 1}
		var pad [128]byte
		copy(pad[:], (*[16]byte)(unsafe.Pointer(&attr[0]))[:])
		fd, _, en := unix.Syscall(unix.SYS_BPF, 0 /* BPF_MAP_CREATE */, uintptr(unsafe.Pointer(&pad[0])), uintptr(len(pad)))
		if en != 0 {
			return result(en, "")
		}
		unix.Close(int(fd))
		return result(nil, "")
	},
	// Keyrings are not namespaced (CVE-2016-0728).
	"keyctl": func([]string) report {
		id, err := unix.AddKey("user", "paddock-hostile", []byte("x"), unix.KEY_SPEC_PROCESS_KEYRING)
		if err == nil {
			_, _ = unix.KeyctlInt(unix.KEYCTL_INVALIDATE, id, 0, 0, 0)
		}
		return result(err, "")
	},
	// TIOCSTI pushes keystrokes into a terminal's input (CVE-2016-7545);
	// "high" sets bits above 32 that the kernel ignores (CVE-2019-10063).
	"tiocsti": func(args []string) report {
		m, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY, 0)
		if err != nil {
			return result(err, "open /dev/ptmx")
		}
		defer unix.Close(m)
		if err := unix.IoctlSetPointerInt(m, unix.TIOCSPTLCK, 0); err != nil {
			return result(err, "unlockpt")
		}
		n, err := unix.IoctlGetInt(m, unix.TIOCGPTN)
		if err != nil {
			return result(err, "ptsname")
		}
		s, err := unix.Open("/dev/pts/"+strconv.Itoa(n), unix.O_RDWR|unix.O_NOCTTY, 0)
		if err != nil {
			return result(err, "open slave")
		}
		defer unix.Close(s)
		cmd := uintptr(unix.TIOCSTI)
		if len(args) > 0 && args[0] == "high" {
			cmd |= 1 << 32
		}
		c := byte('x')
		_, _, en := unix.Syscall(unix.SYS_IOCTL, uintptr(s), cmd, uintptr(unsafe.Pointer(&c)))
		if en != 0 {
			return result(en, "")
		}
		return result(nil, "injected")
	},
	"perf": func([]string) report {
		attr := unix.PerfEventAttr{Type: unix.PERF_TYPE_SOFTWARE, Config: unix.PERF_COUNT_SW_CPU_CLOCK,
			Size: uint32(unsafe.Sizeof(unix.PerfEventAttr{}))}
		fd, err := unix.PerfEventOpen(&attr, 0, -1, -1, unix.PERF_FLAG_FD_CLOEXEC)
		if err == nil {
			unix.Close(fd)
		}
		return result(err, "")
	},
	// userfaultfd stalls kernel copies: the usual way to win a use-after-free race.
	"userfaultfd": func([]string) report {
		fd, _, en := unix.Syscall(unix.SYS_USERFAULTFD, unix.O_CLOEXEC, 0, 0)
		if en != 0 {
			return result(en, "")
		}
		unix.Close(int(fd))
		return result(nil, "")
	},
	// open_by_handle_at: the Shocker escape opened host files by handle.
	"handle": func([]string) report {
		h, mnt, err := unix.NameToHandleAt(unix.AT_FDCWD, "/", 0)
		if err != nil {
			return result(err, "name_to_handle_at")
		}
		_ = mnt
		root, err := unix.Open("/", unix.O_RDONLY|unix.O_DIRECTORY, 0)
		if err != nil {
			return result(err, "open /")
		}
		defer unix.Close(root)
		fd, err := unix.OpenByHandleAt(root, h, unix.O_RDONLY)
		if err == nil {
			unix.Close(fd)
		}
		return result(err, "open_by_handle_at")
	},
	// setns into a namespace through a descriptor.
	"setns": func([]string) report {
		fd, err := unix.Open("/proc/self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return result(err, "open ns")
		}
		defer unix.Close(fd)
		return result(unix.Setns(fd, unix.CLONE_NEWNET), "")
	},
	// The x32 ABI: a second syscall table a filter keyed on numbers would
	// miss. A sandbox kills the process (SIGSYS) before the kernel runs it.
	"x32": func([]string) report {
		_, _, en := unix.RawSyscall(unix.SYS_GETPID|0x40000000, 0, 0, 0)
		if en != 0 {
			return result(en, "")
		}
		return result(nil, "")
	},
	// adjtimex in read-only mode (modes 0): the host clock is not namespaced.
	"adjtimex": func([]string) report {
		var tx unix.Timex
		_, err := unix.Adjtimex(&tx)
		return result(err, "")
	},
	// reboot with a bad magic: natively EINVAL (the kernel looked at it).
	"reboot": func([]string) report {
		_, _, en := unix.Syscall6(unix.SYS_REBOOT, 0xdead, 0xbeef, 0, 0, 0, 0)
		if en != 0 {
			return result(en, "")
		}
		return result(nil, "")
	},
	// finit_module on no file: natively EBADF (the kernel looked at it).
	"module": func([]string) report { return result(unix.FinitModule(-1, "", 0), "") },
	// mknod of /dev/null's numbers: a device node is a door to host devices.
	"mknod": func(args []string) report {
		p := "/tmp/paddock-hostile-null"
		if len(args) > 0 {
			p = args[0]
		}
		err := unix.Mknod(p, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3)))
		if err == nil {
			_ = os.Remove(p)
		}
		return result(err, "")
	},
	// A raw packet socket: spoofing, sniffing, bypassing the proxy.
	"rawsock": func([]string) report {
		fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW, 0x0300)
		if err == nil {
			unix.Close(fd)
		}
		return result(err, "")
	},
	// A raw ICMP socket (ping with a crafted packet).
	"rawip": func([]string) report {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_RAW, unix.IPPROTO_ICMP)
		if err == nil {
			unix.Close(fd)
		}
		return result(err, "")
	},
	// Writing one's own memory through /proc/self/mem (CVE-2012-0056).
	"procmem": func([]string) report {
		var target [8]byte
		fd, err := unix.Open("/proc/self/mem", unix.O_RDWR|unix.O_CLOEXEC, 0)
		if err != nil {
			return result(err, "open")
		}
		defer unix.Close(fd)
		_, err = unix.Pwrite(fd, []byte("pwned!!!"), int64(uintptr(unsafe.Pointer(&target[0]))))
		if err == nil && string(target[:]) != "pwned!!!" {
			err = errors.New("write did not land")
		}
		return result(err, "")
	},
	// Reopening a process's binary for writing through an O_PATH
	// descriptor (CVE-2019-5736, runc): the guest agent is pid 1.
	"exewrite": func(args []string) report {
		pid := intArg(args, 0, 1)
		fd, err := unix.Open(fmt.Sprintf("/proc/%d/exe", pid), unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			return result(err, "open O_PATH")
		}
		defer unix.Close(fd)
		w, err := unix.Open(fmt.Sprintf("/proc/self/fd/%d", fd), unix.O_WRONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return result(err, "reopen for write")
		}
		defer unix.Close(w)
		_, err = unix.Pwrite(w, []byte{0}, 0)
		return result(err, "write")
	},
	// Allocate and touch N MiB.
	"alloc": func(args []string) report {
		mb := intArg(args, 0, 64)
		var keep [][]byte
		for i := 0; i < mb; i++ {
			b := make([]byte, 1<<20)
			for j := 0; j < len(b); j += 4096 {
				b[j] = 1
			}
			keep = append(keep, b)
		}
		return report{OK: true, Count: len(keep)}
	},
	// Open up to N descriptors (the soft limit raised to the hard one).
	"fds": func(args []string) report {
		n := intArg(args, 0, 1000)
		var rl unix.Rlimit
		if unix.Getrlimit(unix.RLIMIT_NOFILE, &rl) == nil {
			rl.Cur = rl.Max
			_ = unix.Setrlimit(unix.RLIMIT_NOFILE, &rl)
		}
		var err error
		count := 0
		for count < n {
			var fd int
			if fd, err = unix.Open("/dev/null", unix.O_RDONLY, 0); err != nil {
				break
			}
			_ = fd
			count++
		}
		r := result(err, fmt.Sprintf("rlimit %d", rl.Max))
		r.Count = count
		return r
	},
	// Create up to N empty files in DIR (inode exhaustion).
	"files": func(args []string) report {
		if len(args) < 1 {
			return result(errors.New("usage: files DIR [N]"), "")
		}
		n := intArg(args, 1, 1000)
		var err error
		count := 0
		for count < n {
			var fd int
			if fd, err = unix.Open(fmt.Sprintf("%s/f%d", args[0], count), unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_CLOEXEC, 0o644); err != nil {
				break
			}
			unix.Close(fd)
			count++
		}
		r := result(err, "")
		r.Count = count
		return r
	},
	// A TCP connection to ADDR (host:port), e.g. the control plane's API.
	"connect": func(args []string) report {
		if len(args) < 1 {
			return result(errors.New("usage: connect HOST:PORT"), "")
		}
		c, err := net.DialTimeout("tcp", args[0], 3*time.Second)
		if err != nil {
			return result(unwrapNet(err), "")
		}
		c.Close()
		return result(nil, "connected")
	},
	// GET URL: "direct" ignores the proxy variables (what malware does),
	// "env" honours them. Detail holds the start of the body.
	"http": func(args []string) report {
		if len(args) < 1 {
			return result(errors.New("usage: http URL [direct|env] [HOST]"), "")
		}
		tr := &http.Transport{Proxy: nil, DisableKeepAlives: true, TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}
		if len(args) > 1 && args[1] == "env" {
			tr.Proxy = http.ProxyFromEnvironment
		}
		req, err := http.NewRequest("GET", args[0], nil)
		if err != nil {
			return result(err, "")
		}
		if len(args) > 2 {
			req.Host = args[2] // a Host header other than the URL's
		}
		resp, err := (&http.Client{Transport: tr, Timeout: 5 * time.Second}).Do(req)
		if err != nil {
			return result(unwrapNet(err), err.Error())
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		r := result(nil, string(b))
		if resp.StatusCode != 200 {
			r = report{Detail: fmt.Sprintf("HTTP %d: %s", resp.StatusCode, b)}
		}
		return r
	},
	// Connect to ADDR and send each MSG (Go-quoted) in turn, reading what
	// arrives for up to a second after each: raw HTTP conversations on
	// one connection (request smuggling). Detail holds every answer.
	"converse": func(args []string) report {
		if len(args) < 2 {
			return result(errors.New("usage: converse ADDR MSG..."), "")
		}
		c, err := net.DialTimeout("tcp", args[0], 3*time.Second)
		if err != nil {
			return result(unwrapNet(err), "")
		}
		defer c.Close()
		var got strings.Builder
		buf := make([]byte, 4096)
		for _, q := range args[1:] {
			msg, err := strconv.Unquote(q)
			if err != nil {
				return result(err, "")
			}
			if _, err := io.WriteString(c, msg); err != nil {
				return report{Detail: got.String() + " [write: " + err.Error() + "]"}
			}
			for end := time.Now().Add(time.Second); time.Now().Before(end); {
				_ = c.SetReadDeadline(end)
				n, err := c.Read(buf)
				got.Write(buf[:n])
				if err != nil {
					break
				}
			}
		}
		return result(nil, got.String())
	},
	// Keep N idle TCP connections to ADDR open for SECONDS, opening a new
	// one whenever one is closed (a flood of connections that never send
	// a byte). Count: connections made; Detail: how many the other side
	// closed and how long they had lived (the median).
	"hold": func(args []string) report {
		if len(args) < 3 {
			return result(errors.New("usage: hold ADDR N SECONDS"), "")
		}
		n, secs := intArg(args, 1, 1), intArg(args, 2, 1)
		end := time.Now().Add(time.Duration(secs) * time.Second)
		type life struct{ d time.Duration }
		closed := make(chan life, 4*n)
		made := 0
		var lives []time.Duration
		open := 0
		for time.Now().Before(end) {
			for open < n && time.Now().Before(end) {
				c, err := net.DialTimeout("tcp", args[0], time.Second)
				if err != nil {
					time.Sleep(50 * time.Millisecond)
					break
				}
				made++
				open++
				go func(c net.Conn, start time.Time) {
					defer c.Close()
					_ = c.SetReadDeadline(end)
					_, _ = c.Read(make([]byte, 1))
					if time.Now().Before(end) {
						closed <- life{time.Since(start)}
					} else {
						closed <- life{-1}
					}
				}(c, time.Now())
			}
			select {
			case l := <-closed:
				open--
				if l.d >= 0 {
					lives = append(lives, l.d)
				}
			case <-time.After(100 * time.Millisecond):
			}
		}
		median := time.Duration(0)
		if len(lives) > 0 {
			for i := range lives { // a small insertion sort
				for j := i; j > 0 && lives[j] < lives[j-1]; j-- {
					lives[j], lives[j-1] = lives[j-1], lives[j]
				}
			}
			median = lives[len(lives)/2]
		}
		r := result(nil, fmt.Sprintf("closed=%d median_ms=%d", len(lives), median.Milliseconds()))
		r.Count = made
		return r
	},
	// Keep N lookups of names PREFIX-<n>.SUFFIX in flight for SECONDS, each
	// name new (no cache helps). Count: lookups made.
	"dnsflood": func(args []string) report {
		if len(args) < 4 {
			return result(errors.New("usage: dnsflood PREFIX SUFFIX N SECONDS"), "")
		}
		n, secs := intArg(args, 2, 1), intArg(args, 3, 1)
		end := time.Now().Add(time.Duration(secs) * time.Second)
		var made atomic.Int64
		var wg sync.WaitGroup
		for w := 0; w < n; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for time.Now().Before(end) {
					i := made.Add(1)
					ctx, cancel := context.WithDeadline(context.Background(), end)
					_, _ = net.DefaultResolver.LookupHost(ctx, fmt.Sprintf("%s-%d-%d.%s", args[0], os.Getpid(), i, args[1]))
					cancel()
				}
			}()
		}
		wg.Wait()
		r := result(nil, "flooded")
		r.Count = int(made.Load())
		return r
	},
	// TLS to ADDR with server name SNI, then one HTTP request for HOST.
	"tls": func(args []string) report {
		if len(args) < 3 {
			return result(errors.New("usage: tls ADDR SNI HOST"), "")
		}
		d := &net.Dialer{Timeout: 5 * time.Second}
		c, err := tls.DialWithDialer(d, "tcp", args[0], &tls.Config{ServerName: args[1], InsecureSkipVerify: true})
		if err != nil {
			return result(unwrapNet(err), err.Error())
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", args[2])
		b, err := io.ReadAll(io.LimitReader(c, 2048))
		if len(b) == 0 {
			return result(err, "no answer")
		}
		return result(nil, string(b))
	},
	// Resolve NAME with the system's resolver (the sandbox's resolv.conf).
	"dns": func(args []string) report {
		if len(args) < 1 {
			return result(errors.New("usage: dns NAME"), "")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		addrs, err := net.DefaultResolver.LookupHost(ctx, args[0])
		if err != nil {
			return result(err, err.Error())
		}
		return result(nil, strings.Join(addrs, ","))
	},
	// Send one UDP datagram with PAYLOAD to ADDR.
	"udp": func(args []string) report {
		if len(args) < 2 {
			return result(errors.New("usage: udp ADDR PAYLOAD"), "")
		}
		c, err := net.Dial("udp", args[0])
		if err != nil {
			return result(unwrapNet(err), "")
		}
		defer c.Close()
		_, err = c.Write([]byte(args[1]))
		return result(unwrapNet(err), "sent")
	},
	// Listen on ADDR and answer every connection with "hello from probe".
	"listen": func(args []string) report {
		if len(args) < 1 {
			return result(errors.New("usage: listen ADDR"), "")
		}
		ln, err := net.Listen("tcp", args[0])
		if err != nil {
			return result(unwrapNet(err), "")
		}
		fmt.Println(`{"op":"listen","ok":true,"detail":"listening"}`)
		for {
			c, err := ln.Accept()
			if err != nil {
				return result(err, "")
			}
			fmt.Fprint(c, "HTTP/1.0 200 OK\r\n\r\nhello from probe\n")
			c.Close()
		}
	},
	// A new pid or network namespace (needs CAP_SYS_ADMIN over the userns).
	"netns": func([]string) report { return result(unix.Unshare(unix.CLONE_NEWNET), "") },
	// Open a path for writing (Landlock stands between a sandbox and /proc, /sys).
	"write": func(args []string) report {
		if len(args) < 2 {
			return result(errors.New("usage: write PATH DATA"), "")
		}
		f, err := os.OpenFile(args[0], os.O_WRONLY, 0)
		if err != nil {
			return result(unwrap(err), "open")
		}
		defer f.Close()
		_, err = f.WriteString(args[1])
		return result(unwrap(err), "write")
	},
}

// unwrap gives the errno inside an *os.PathError.
func unwrap(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// unwrapNet gives the errno inside a net error.
func unwrapNet(err error) error {
	var en syscall.Errno
	if errors.As(err, &en) {
		return en
	}
	return err
}
