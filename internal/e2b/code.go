package e2b

import (
	"context"
	"net/http"
	"strings"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/gate"
	"github.com/paddockhq/paddock/internal/kernel/codewire"
	"github.com/paddockhq/paddock/internal/kernel/e2bci"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/wire"
)

// E2B's code interpreter (@e2b/code-interpreter): requests for a sandbox
// (E2b-Sandbox-Id) on port 49999, where E2B runs its Jupyter server, are
// answered by internal/kernel/e2bci over the manager's code contexts
// (docs/code.md) — the same shapes E2B's server answers with.

// CodeInterpreterPort is the port the code-interpreter SDK names in
// E2b-Sandbox-Port.
const CodeInterpreterPort = "49999"

// Template names the code-interpreter SDK creates sandboxes from.
var codeInterpreterTemplates = map[string]bool{"code-interpreter-v1": true, "code-interpreter": true}

// codeTemplate is the Paddock template with the kernels and the data
// stack, when the server has one; else the default template (the host
// template, which has them where the host has python3-ipykernel, numpy,
// pandas, matplotlib and node).
const codeTemplate = "code-interpreter"

// codeUser is the user contexts run as: E2B's default user, as envd's
// requests without Authorization are.
const codeUser = wire.UserUser

const hdrTrafficToken = "E2B-Traffic-Access-Token"

// codeToken finds a code-interpreter request's credential. The SDK sends
// X-Access-Token only with /execute; its context calls carry just
// E2B-Traffic-Access-Token, which Paddock hands out as the same sandbox
// token (trafficAccessToken on create and connect). Either must be a
// sandbox token, as for envd.
func codeToken(r *http.Request) (string, error) {
	tok := strings.TrimSpace(r.Header.Get(hdrAccessToken))
	if tok == "" {
		tok = strings.TrimSpace(r.Header.Get(hdrTrafficToken))
	}
	return accessTokenFor(r, CodeInterpreterPort, tok)
}

type codeTargetKey struct{}

type codeTarget struct {
	sc sandbox.Scope
	id string
}

// codeContexts is e2bci.Contexts over the manager, for the sandbox and
// caller the request carries.
type codeContexts struct{ m *sandbox.Manager }

func target(ctx context.Context) codeTarget {
	t, _ := ctx.Value(codeTargetKey{}).(codeTarget)
	return t
}

func (c codeContexts) Create(ctx context.Context, req codewire.CreateContextRequest) (codewire.Context, error) {
	t := target(ctx)
	out, err := c.m.CreateCodeContext(ctx, t.sc, t.id, wire.CodeContextRequest{CreateContextRequest: req, User: codeUser})
	return out.Context, err
}

func (c codeContexts) List(ctx context.Context) ([]codewire.Context, error) {
	t := target(ctx)
	list, err := c.m.CodeContexts(ctx, t.sc, t.id)
	out := make([]codewire.Context, 0, len(list))
	for _, x := range list {
		out = append(out, x.Context)
	}
	return out, err
}

func (c codeContexts) Delete(ctx context.Context, id string) error {
	t := target(ctx)
	return c.m.DeleteCodeContext(ctx, t.sc, t.id, id)
}

func (c codeContexts) Restart(ctx context.Context, id string) (codewire.Context, error) {
	t := target(ctx)
	out, err := c.m.RestartCodeContext(ctx, t.sc, t.id, id)
	return out.Context, err
}

func (c codeContexts) Execute(ctx context.Context, req codewire.ExecuteRequest, emit func(codewire.Event) error) error {
	t := target(ctx)
	in := wire.CodeExecuteRequest{ExecuteRequest: req}
	if req.Context == "" {
		in.User = codeUser // a named context runs as whoever it was made for
	}
	return c.m.ExecuteCode(ctx, t.sc, t.id, in, emit)
}

// codeRoutes is the code interpreter's mux, each route behind the gate
// with its right (the manager checks them again).
func (s *Server) codeRoutes() *http.ServeMux {
	fail := func(w http.ResponseWriter, _ *http.Request, err error) { writeEnvdError(w, err) }
	g := gate.New(s.o.Auth, s.o.Auditor, s.log, gate.Surface{Name: "E2B code interpreter", Credential: codeToken,
		Invalid: errBadCred, Unavailable: errCannotAuth, Vet: envdVet, Limit: s.o.RateLimit, Fail: fail})
	inner := e2bci.NewHandler(codeContexts{m: s.m})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t := codeTarget{sc: gate.Scope(r.Context()), id: r.Header.Get(hdrSandboxID)}
		inner.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), codeTargetKey{}, t)))
	})
	mux := http.NewServeMux()
	for _, rt := range []struct {
		pattern string
		need    rights.Right
	}{
		{"GET /health", rights.Read},
		{"POST /execute", rights.Exec},
		{"GET /contexts", rights.Read},
		{"POST /contexts", rights.Exec},
		{"DELETE /contexts/{id}", rights.Exec},
		{"POST /contexts/{id}/restart", rights.Exec},
	} {
		s.routes = append(s.routes, Route{Pattern: rt.pattern, Need: rt.need, Envd: true, Port: CodeInterpreterPort})
		mux.Handle(rt.pattern, g.Wrap(rt.pattern, rt.need, h))
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeEnvdError(w, errs.NotFound("no such code-interpreter endpoint: %s %s", r.Method, clipText(r.URL.Path)))
	})
	return mux
}

// warmCode starts the default Python context of a sandbox made from a
// code-interpreter template while the SDK is still setting up, so that
// its first runCode finds the kernel running. A caller without the exec
// right, or a failure, only loses the head start.
func (s *Server) warmCode(r *http.Request, sc sandbox.Scope, id, templateID string) {
	if !codeInterpreterTemplates[templateID] || !sc.Can(rights.Exec) {
		return
	}
	if err := s.m.WarmCode(r.Context(), sc, id, codeUser, []string{codewire.Python}); err != nil {
		s.log.Warn("e2b: warming the code interpreter", "sandbox", id, "err", err)
	}
}
