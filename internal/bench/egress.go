package bench

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/paddockhq/paddock/client"
)

// egress measures an HTTP GET through the egress proxy from inside a
// sandbox (curl, which honours the proxy variables the network setup
// installs), next to the exec of /bin/true that carries it. The
// destination must be one the server's egress allows and that lives on
// this machine (--egress-url): the bench never sends traffic elsewhere.
func (r *runner) egress(ctx context.Context, st *Stack) {
	res := r.result(sEgress)
	if why := r.networkUnavailable(ctx, st); why != "" {
		r.set(res.without(StatusUnavailable, why))
		return
	}
	if r.o.EgressURL == "" {
		r.set(res.without(StatusUnavailable, "needs --egress-url: an http URL on this machine that the server's egress allows (a server started with --dns-host NAME=IP and --egress-allow-cidr for it)"))
		return
	}
	u, err := url.Parse(r.o.EgressURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		r.set(res.without(StatusFailed, fmt.Sprintf("--egress-url %q: want an http(s) URL", clip(r.o.EgressURL, 100))))
		return
	}
	spec := r.spec()
	spec.Network = &client.Network{Mode: "allowlist", Allow: []string{u.Hostname()}}
	sb, err := r.create(ctx, st, spec)
	if err != nil {
		r.set(res.without(StatusFailed, "create: "+err.Error()))
		return
	}
	defer func() { _ = r.remove(ctx, st, sb.ID) }()
	var bytes int64
	var secs float64
	get := func(ctx context.Context) error {
		out, err := st.Client.Exec(ctx, sb.ID, client.ExecRequest{Cmd: []string{"curl", "-fsS", "-o", "/dev/null",
			"--max-time", "30", "-w", "%{size_download} %{time_total}\n", u.String()}})
		if err != nil {
			return err
		}
		if out.ExitCode != 0 {
			return fmt.Errorf("curl exited %d: %s", out.ExitCode, clip(out.Stderr, 200))
		}
		if n, t, ok := ParseCurlTiming(out.Stdout); ok {
			bytes, secs = bytes+n, secs+t
		}
		return nil
	}
	if err := get(ctx); err != nil {
		r.set(res.without(StatusFailed, "first request: "+err.Error()))
		return
	}
	bytes, secs = 0, 0
	r.prog.start(sEgress, r.o.Runs)
	var samples, base []time.Duration
	var errs int
	var last error
	for i := 0; i < r.o.Runs && ctx.Err() == nil; i++ {
		t := time.Now()
		err := get(ctx)
		d := time.Since(t)
		t = time.Now()
		berr := execTrue(ctx, st.Client, sb.ID)
		bd := time.Since(t)
		if err != nil || berr != nil {
			errs++
			if err != nil {
				last = err
			} else {
				last = berr
			}
		} else {
			samples, base = append(samples, d), append(base, bd)
		}
		r.prog.step(1)
	}
	out := r.summarize(ctx, res, samples, Sum(samples), errs, last)
	if out.Status == StatusOK {
		b := Summarize(base, 0)
		out.extra("exec_true_p50_ms", ms(b.P50))
		out.extra("minus_exec_true_p50_ms", *out.P50ms-ms(b.P50))
		out.note("curl's own start-up is in the numbers; minus_exec_true subtracts the exec round trip only")
		if secs > 0 {
			out.extra("response_bytes", float64(bytes)/float64(len(samples)))
			out.extra("mib_per_s", float64(bytes)/mib/secs) // as curl saw it: transfer time only
		}
	}
	r.set(out)
}

// ParseCurlTiming reads curl's -w "%{size_download} %{time_total}" line:
// bytes received and seconds taken (ok false unless both are sane).
func ParseCurlTiming(s string) (int64, float64, bool) {
	f := strings.Fields(s)
	if len(f) != 2 {
		return 0, 0, false
	}
	n, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil || n < 0 || n > 1<<50 {
		return 0, 0, false
	}
	t, err := strconv.ParseFloat(f[1], 64)
	if err != nil || !(t > 0) || t > 1e6 {
		return 0, 0, false
	}
	return n, t, true
}
