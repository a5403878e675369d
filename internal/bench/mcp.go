package bench

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// bearer adds the API key to every MCP request.
type bearer struct {
	key  string
	next http.RoundTripper
}

func (b bearer) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+b.key)
	return b.next.RoundTrip(req)
}

// mcpExec measures the exec tool over streamable HTTP against REST exec
// of the same command in the same sandbox, alternating the two so that
// both see the same conditions; the overhead is the difference of p50s.
func (r *runner) mcpExec(ctx context.Context, st *Stack) {
	res := r.result(sMCP)
	if r.caps.mcp != nil {
		r.set(res.without(StatusUnavailable, r.caps.mcp.Error()))
		return
	}
	sb, err := r.create(ctx, st, r.spec())
	if err != nil {
		r.set(res.without(StatusFailed, "create: "+err.Error()))
		return
	}
	defer func() { _ = r.remove(ctx, st, sb.ID) }()
	hc := &http.Client{Transport: bearer{key: st.Client.Key(), next: http.DefaultTransport}}
	mc := sdk.NewClient(&sdk.Implementation{Name: "paddock-bench", Version: r.o.Version}, nil)
	sess, err := mc.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: st.Client.BaseURL() + "/mcp", HTTPClient: hc,
		DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	if err != nil {
		r.set(res.without(StatusFailed, "MCP connect: "+err.Error()))
		return
	}
	defer sess.Close()
	call := func(ctx context.Context) error {
		out, err := sess.CallTool(ctx, &sdk.CallToolParams{Name: "exec",
			Arguments: map[string]any{"sandbox": sb.ID, "argv": trueCmd}})
		if err != nil {
			return err
		}
		if out.IsError {
			return fmt.Errorf("exec tool: %s", toolText(out))
		}
		if m, ok := out.StructuredContent.(map[string]any); ok {
			if code, ok := m["exit_code"].(float64); ok && code != 0 {
				return fmt.Errorf("/bin/true exited %g", code)
			}
		}
		return nil
	}
	for i := 0; i < 3; i++ { // warm-up, untimed
		if err := errors.Join(call(ctx), execTrue(ctx, st.Client, sb.ID)); err != nil {
			r.set(res.without(StatusFailed, "warm-up: "+err.Error()))
			return
		}
	}
	r.prog.start(sMCP, r.o.Runs)
	var viaMCP, viaREST []time.Duration
	var errs int
	var last error
	for i := 0; i < r.o.Runs && ctx.Err() == nil; i++ {
		t := time.Now()
		err := call(ctx)
		d := time.Since(t)
		t = time.Now()
		rerr := execTrue(ctx, st.Client, sb.ID)
		rd := time.Since(t)
		if err != nil || rerr != nil {
			errs, last = errs+1, errors.Join(err, rerr)
		} else {
			viaMCP, viaREST = append(viaMCP, d), append(viaREST, rd)
		}
		r.prog.step(1)
	}
	out := r.summarize(ctx, res, viaMCP, Sum(viaMCP), errs, last)
	if out.Status == StatusOK {
		rs := Summarize(viaREST, 0)
		out.extra("rest_exec_p50_ms", ms(rs.P50))
		out.extra("overhead_p50_ms", *out.P50ms-ms(rs.P50))
	}
	r.set(out)
}

func toolText(res *sdk.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if t, ok := c.(*sdk.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return clip(strings.Join(parts, " "), 300)
}
