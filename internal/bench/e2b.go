package bench

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/wire"
)

// The E2B adapter's overhead: the same operation through E2B's envd
// protocol (what the unmodified SDK sends) and through REST, alternated in
// one sandbox so that both see the same conditions. The bounds:
// ≤ 0.5 ms added to an exec's p50, ≤ 5 % to a 16 MiB transfer.

// Scenario names (registered in bench.go's list by init below).
const (
	sE2BExec  = "paddock/e2b/exec"
	sE2BFiles = "paddock/e2b/files"
)

// e2bScenarios are the adapter's scenarios.
var e2bScenarios = []scenario{
	{sE2BExec, "exec /bin/true through E2B's process.Process/Start (Connect stream, as the SDK's commands.run), next to REST exec"},
	{sE2BFiles, "write then read a 16 MiB file through E2B's /files (as the SDK's files.write/read), next to the same through REST"},
}

func init() { scenarios = append(scenarios, e2bScenarios...) }

// e2bEnvd calls envd's API of sandbox id with a sandbox token.
type e2bEnvd struct {
	base, id, token string
	hc              *http.Client
}

func (e e2bEnvd) request(ctx context.Context, method, path string, body io.Reader, ctype string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, e.base+path, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("E2b-Sandbox-Id", e.id)
	req.Header.Set("E2b-Sandbox-Port", "49983")
	req.Header.Set("X-Access-Token", e.token)
	// Go's transport would ask for gzip, which the adapter then spends CPU
	// on (files.read with gzip: true); the SDK's plain read does not ask.
	req.Header.Set("Accept-Encoding", "identity")
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	return e.hc.Do(req)
}

// exec runs /bin/true with process.Process/Start and reads the stream to
// its end frame, checking the exit code.
func (e e2bEnvd) exec(ctx context.Context) error {
	msg := []byte(`{"process":{"cmd":"/bin/true"}}`)
	frame := binary.BigEndian.AppendUint32([]byte{0}, uint32(len(msg)))
	resp, err := e.request(ctx, http.MethodPost, "/process.Process/Start", bytes.NewReader(append(frame, msg...)), "application/connect+json")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("process.Process/Start: %d %s", resp.StatusCode, clip(string(b), 300))
	}
	exit := -1
	hdr := make([]byte, 5)
	for {
		if _, err := io.ReadFull(resp.Body, hdr); err != nil {
			return fmt.Errorf("the stream ended without its end frame: %w", err)
		}
		n := binary.BigEndian.Uint32(hdr[1:])
		if n > 1<<20 {
			return fmt.Errorf("a %d-byte message", n)
		}
		payload := make([]byte, n)
		if _, err := io.ReadFull(resp.Body, payload); err != nil {
			return err
		}
		if hdr[0]&2 != 0 { // end of stream: {} or an error
			if bytes.Contains(payload, []byte(`"error"`)) {
				return fmt.Errorf("the stream ended with %s", clip(string(payload), 300))
			}
			if exit != 0 {
				return fmt.Errorf("/bin/true exited %d", exit)
			}
			return nil
		}
		var ev struct {
			Event struct {
				End *struct {
					ExitCode int `json:"exitCode"`
				} `json:"end"`
			} `json:"event"`
		}
		if err := json.Unmarshal(payload, &ev); err != nil {
			return fmt.Errorf("malformed message: %w", err)
		}
		if ev.Event.End != nil {
			exit = ev.Event.End.ExitCode
		}
	}
}

// write uploads data to path as an octet-stream (envd 0.5.7's form).
func (e e2bEnvd) write(ctx context.Context, path string, data []byte) error {
	resp, err := e.request(ctx, http.MethodPost, "/files?username=root&path="+url.QueryEscape(path), bytes.NewReader(data), "application/octet-stream")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("POST /files: %d", resp.StatusCode)
	}
	return nil
}

// read downloads path and checks its size.
func (e e2bEnvd) read(ctx context.Context, path string, size int64) error {
	resp, err := e.request(ctx, http.MethodGet, "/files?username=root&path="+url.QueryEscape(path), nil, "")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("GET /files: %d %s", resp.StatusCode, clip(string(b), 300))
	}
	n, err := io.Copy(io.Discard, resp.Body)
	if err != nil {
		return err
	}
	if n != size {
		return fmt.Errorf("read %d bytes of %d", n, size)
	}
	return nil
}

// e2b runs the adapter's scenarios on one sandbox made through REST; the
// E2B calls use a sandbox token as the SDK's envdAccessToken.
func (r *runner) e2b(ctx context.Context, st *Stack) {
	names := []string{sE2BExec, sE2BFiles}
	setAll := func(status Status, why string) {
		for _, n := range names {
			if r.sel[n] {
				r.set(r.result(n).without(status, why))
			}
		}
	}
	sb, err := r.create(ctx, st, r.spec())
	if err != nil {
		setAll(StatusFailed, "create: "+err.Error())
		return
	}
	defer func() { _ = r.remove(ctx, st, sb.ID) }()
	tok, err := st.Client.CreateToken(ctx, sb.ID, []wire.Scope{wire.ScopeRead, wire.ScopeWrite, wire.ScopeExec}, time.Hour)
	if err != nil {
		setAll(StatusFailed, "mint a sandbox token: "+err.Error())
		return
	}
	e := e2bEnvd{base: st.Client.BaseURL(), id: sb.ID, token: tok.Token, hc: http.DefaultClient}
	if err := e.exec(ctx); err != nil {
		if strings.Contains(err.Error(), ": 404") {
			setAll(StatusUnavailable, "the E2B-compatible API is not served by this server")
		} else {
			setAll(StatusFailed, "first E2B exec: "+err.Error())
		}
		return
	}
	if r.sel[sE2BExec] {
		r.interleaved(ctx, sE2BExec, r.o.Runs, e.exec, func(ctx context.Context) error { return execTrue(ctx, st.Client, sb.ID) }, nil)
	}
	if r.sel[sE2BFiles] {
		payload := make([]byte, fileSize)
		rng := rand.NewChaCha8([32]byte{2}) // incompressible, reproducible
		_, _ = rng.Read(payload)
		const ePath, rPath = "/tmp/paddock-bench-e2b.bin", "/tmp/paddock-bench-rest.bin"
		viaE2B := func(ctx context.Context) error {
			return errors.Join(e.write(ctx, ePath, payload), e.read(ctx, ePath, fileSize))
		}
		viaREST := func(ctx context.Context) error {
			fi, err := st.Client.WriteFile(ctx, sb.ID, client.WriteRequest{Path: rPath}, bytes.NewReader(payload), fileSize)
			if err != nil {
				return err
			}
			if fi.Size != fileSize {
				return fmt.Errorf("wrote %d bytes, the server reports %d", fileSize, fi.Size)
			}
			f, err := st.Client.OpenFile(ctx, sb.ID, client.ReadFileRequest{Path: rPath})
			if err != nil {
				return err
			}
			defer f.Body.Close()
			if n, err := io.Copy(io.Discard, f.Body); err != nil || n != fileSize {
				return errors.Join(err, fmt.Errorf("read %d bytes of %d", n, fileSize))
			}
			return nil
		}
		r.interleaved(ctx, sE2BFiles, r.filesRuns(), viaE2B, viaREST, func(out *Result, samples []time.Duration) {
			out.extra("file_mib", fileSize/mib)
			out.extra("mib_per_s", 2*float64(len(samples))*fileSize/mib/Sum(samples).Seconds())
		})
	}
}

// interleaved times viaE2B and viaREST alternately n times (after warm-up
// calls of both), reports viaE2B's numbers as the scenario's and REST's
// p50, the p50 difference and its ratio as extras.
func (r *runner) interleaved(ctx context.Context, name string, n int, viaE2B, viaREST func(context.Context) error, more func(*Result, []time.Duration)) {
	res := r.result(name)
	for i := 0; i < 2; i++ {
		if err := errors.Join(viaE2B(ctx), viaREST(ctx)); err != nil {
			r.set(res.without(StatusFailed, "warm-up: "+err.Error()))
			return
		}
	}
	r.prog.start(name, n)
	var e2b, rest []time.Duration
	var errs int
	var last error
	for i := 0; i < n && ctx.Err() == nil; i++ {
		first, second := viaE2B, viaREST
		if i%2 == 1 { // neither always goes first
			first, second = viaREST, viaE2B
		}
		t := time.Now()
		err1 := first(ctx)
		d1 := time.Since(t)
		t = time.Now()
		err2 := second(ctx)
		d2 := time.Since(t)
		if i%2 == 1 {
			d1, d2 = d2, d1
		}
		if err1 != nil || err2 != nil {
			errs, last = errs+1, errors.Join(err1, err2)
		} else {
			e2b, rest = append(e2b, d1), append(rest, d2)
		}
		r.prog.step(1)
	}
	out := r.summarize(ctx, res, e2b, Sum(e2b), errs, last)
	if out.Status == StatusOK {
		rs := Summarize(rest, 0)
		out.extra("rest_p50_ms", ms(rs.P50))
		out.extra("overhead_p50_ms", round3(*out.P50ms-ms(rs.P50)))
		if rs.P50 > 0 {
			out.extra("overhead_p50_pct", round3(100*(*out.P50ms-ms(rs.P50))/ms(rs.P50)))
		}
		if more != nil {
			more(&out, e2b)
		}
	}
	r.set(out)
}
