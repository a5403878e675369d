package e2b

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/gate"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/sandbox"
	"github.com/paddockhq/paddock/wire"
)

// The control plane: E2B's REST API for sandboxes, over the manager.

// maxControlBody bounds a control-plane request body.
const maxControlBody = 1 << 20

// List page sizes.
const (
	defaultPage = 100
	maxPage     = 100
)

// allTraffic is E2B's name for "every destination" in allowOut/denyOut.
const allTraffic = "0.0.0.0/0"

type ctlHandler func(w http.ResponseWriter, r *http.Request, sc rights.Scope)

// The control plane's credential and error shape (package gate).
var (
	errNoAPIKey   = errs.New(errs.CodeUnauthenticated, "missing API key (X-API-KEY: e2b_...; create one with paddock key create --format e2b)")
	errBadCred    = errs.New(errs.CodeUnauthenticated, "invalid or revoked credential")
	errCannotAuth = errs.New(errs.CodeUnavailable, "cannot check the credential right now")
)

// apiKey reads X-API-KEY, or a bearer token (the scheme in any letter
// case: gate.AuthParam).
func apiKey(r *http.Request) (string, error) {
	cred := strings.TrimSpace(r.Header.Get(hdrAPIKey))
	if cred == "" {
		b, err := gate.Bearer(r.Header)
		if err != nil {
			return "", err
		}
		cred = b
	}
	if cred == "" {
		return "", errNoAPIKey
	}
	return cred, nil
}

func (s *Server) controlRoutes() *http.ServeMux {
	mux := http.NewServeMux()
	probe := newRouteProbe()
	g := gate.New(s.o.Auth, s.o.Auditor, s.log, gate.Surface{Name: "E2B", Credential: apiKey, Invalid: errBadCred,
		Unavailable: errCannotAuth, Limit: s.o.RateLimit, Fail: func(w http.ResponseWriter, _ *http.Request, err error) { writeAPIError(w, err) }})
	add := func(pattern string, need rights.Right, h ctlHandler) {
		probe.add(pattern)
		s.routes = append(s.routes, Route{Pattern: pattern, Need: need})
		mux.Handle(pattern, g.Wrap(pattern, need, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h(w, r, gate.Scope(r.Context()))
		})))
	}
	add("POST /sandboxes", rights.Write, s.createSandbox)
	add("POST /v2/sandboxes", rights.Write, s.createSandbox)
	add("GET /sandboxes", rights.Read, s.listV1)
	add("GET /v2/sandboxes", rights.Read, s.listV2)
	add("GET /sandboxes/{sandboxID}", rights.Read, s.getSandbox)
	add("DELETE /sandboxes/{sandboxID}", rights.Write, s.killSandbox)
	add("POST /sandboxes/{sandboxID}/timeout", rights.Write, s.setTimeout)
	add("POST /sandboxes/{sandboxID}/refreshes", rights.Write, s.refresh)
	add("POST /sandboxes/{sandboxID}/connect", rights.Read, s.connectSandbox)
	add("POST /v2/sandboxes/{sandboxID}/connect", rights.Read, s.connectSandbox)
	add("PUT /sandboxes/{sandboxID}/network", rights.Network, s.setNetwork)
	add("POST /sandboxes/{sandboxID}/pause", rights.Write, s.pauseSandbox) // lifecycle.go
	add("POST /sandboxes/{sandboxID}/resume", rights.Write, s.resumeSandbox)
	add("POST /sandboxes/{sandboxID}/snapshots", rights.Snapshots, s.createSnapshot) // state.go
	add("GET /snapshots", rights.Read, s.listSnapshots)
	add("DELETE /templates/{templateID}", rights.Snapshots, s.deleteTemplate)
	add("POST /sandboxes/{sandboxID}/fork", rights.Write, s.forkSandbox)
	add("GET /sandboxes/{sandboxID}/metrics", rights.Read, s.sandboxMetrics) // metrics.go
	add("GET /sandboxes/metrics", rights.Read, s.sandboxesMetrics)
	add("POST /v3/templates", rights.Templates, s.requestBuild) // tplapi.go
	add("GET /templates/{templateID}/files/{hash}", rights.Templates, s.fileLink)
	add("PUT /templates/{templateID}/files/{hash}", rights.Templates, s.uploadFiles)
	add("POST /v2/templates/{templateID}/builds/{buildID}", rights.Templates, s.startBuild)
	add("GET /templates/{templateID}/builds/{buildID}/status", rights.Read, s.buildStatus)
	add("GET /templates/aliases/{alias}", rights.Read, s.templateAlias)
	s.secretRoutes(add) // secrets.go
	// Parts of E2B's API that Paddock does not have: a clear 501, after
	// authentication (the refusal is on the record like any call).
	for pattern, what := range map[string]string{
		"GET /sandboxes/{sandboxID}/logs":    "sandbox logs",
		"GET /v2/sandboxes/{sandboxID}/logs": "sandbox logs",
		"POST /templates/tags":               "template tags (build each version under its own name)",
		"DELETE /templates/tags":             "template tags (build each version under its own name)",
	} {
		add(pattern, rights.Read, func(w http.ResponseWriter, r *http.Request, _ rights.Scope) {
			writeAPIError(w, errs.New(errs.CodeUnsupported, "%s: not supported by Paddock's E2B-compatible API (see docs/e2b.md)", what))
		})
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if probe.known(r) {
			writeAPIError(w, errs.New(errs.CodeMethodNotAllowed, "%s is not allowed on %s", r.Method, clipText(r.URL.Path)))
			return
		}
		writeAPIError(w, errs.NotFound("no such endpoint: %s %s", r.Method, clipText(r.URL.Path)))
	})
	return mux
}

// apiStatus is the HTTP status of an error code: the same as on every
// other surface.
func apiStatus(code errs.Code) int { return errs.HTTPStatus(code) }

// apiError is E2B's error shape: the HTTP status repeated as a number.
type apiError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func writeAPIError(w http.ResponseWriter, err error) {
	status := apiStatus(errs.CodeOf(err))
	if status == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", "1")
	}
	writeJSON(w, status, apiError{Code: status, Message: errs.Public(err)})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// decodeBody reads a bounded JSON body (memory exhaustion) strictly: an
// unknown field is refused, so that a misspelt option never silently does
// nothing; an empty body is {}.
func decodeBody(r *http.Request, v any) error {
	b, err := io.ReadAll(io.LimitReader(r.Body, maxControlBody+1))
	if err != nil {
		return errs.Wrap(errs.CodeInvalid, err, "cannot read the request body")
	}
	if len(b) > maxControlBody {
		return errs.New(errs.CodeTooLarge, "request body over %d bytes", maxControlBody)
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.Is(err, io.ErrUnexpectedEOF):
			return errs.Invalid("truncated JSON body")
		case errors.As(err, &se):
			return errs.Invalid("malformed JSON at byte %d", se.Offset)
		case errors.As(err, &te):
			return errs.Invalid("field %q has the wrong type", clipText(te.Field))
		}
		if f, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			return errs.Invalid("field %s is not supported by Paddock's E2B-compatible API", clipText(f))
		}
		return errs.Invalid("malformed JSON body")
	}
	if dec.More() {
		return errs.Invalid("malformed JSON body: trailing data")
	}
	return nil
}

// e2bNetwork is SandboxNetworkConfig and SandboxNetworkUpdateConfig.
type e2bNetwork struct {
	AllowOut           []string        `json:"allowOut"`
	DenyOut            []string        `json:"denyOut"`
	AllowPublicTraffic *bool           `json:"allowPublicTraffic"`
	MaskRequestHost    *string         `json:"maskRequestHost"`
	HTTPSPorts         []int           `json:"httpsPorts"`
	EgressProxy        json.RawMessage `json:"egressProxy"`
	Rules              json.RawMessage `json:"rules"`
	// Only in updates.
	AllowInternetAccess *bool `json:"allow_internet_access"`
}

type createBody struct {
	TemplateID          string            `json:"templateID"`
	Timeout             *int64            `json:"timeout"`
	Metadata            map[string]string `json:"metadata"`
	EnvVars             map[string]string `json:"envVars"`
	Secure              *bool             `json:"secure"`
	AllowInternetAccess *bool             `json:"allow_internet_access"`
	Network             *e2bNetwork       `json:"network"`
	AutoPause           *bool             `json:"autoPause"`
	AutoPauseMemory     *bool             `json:"autoPauseMemory"`
	AutoResume          *struct {
		Enabled bool `json:"enabled"`
	} `json:"autoResume"`
	MCP          json.RawMessage   `json:"mcp"`
	IAM          json.RawMessage   `json:"iam"`
	VolumeMounts []json.RawMessage `json:"volumeMounts"`
}

func present(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && !bytes.Equal(t, []byte("null"))
}

// specFor maps a create body onto a Paddock spec.
func (s *Server) specFor(b *createBody) (sandbox.Spec, error) {
	switch {
	case b.AutoResume != nil && b.AutoResume.Enabled && (b.AutoPause == nil || !*b.AutoPause):
		return sandbox.Spec{}, errs.Invalid("autoResume needs autoPause (onTimeout: \"pause\")")
	case present(b.MCP):
		return sandbox.Spec{}, errs.New(errs.CodeUnsupported, "the MCP gateway is not supported here; Paddock serves its own MCP endpoint at /mcp")
	case present(b.IAM):
		return sandbox.Spec{}, errs.New(errs.CodeUnsupported, "workload identity tokens (iam) are not supported by Paddock")
	case len(b.VolumeMounts) > 0:
		return sandbox.Spec{}, errs.New(errs.CodeUnsupported, "volume mounts are not supported by Paddock")
	}
	spec := sandbox.Spec{Template: s.template(b.TemplateID), Labels: b.Metadata, Env: b.EnvVars}
	lifecycleFor(b, &spec)
	if b.Timeout != nil {
		if *b.Timeout < 0 {
			return sandbox.Spec{}, errs.Invalid("timeout must not be negative")
		}
		spec.TimeoutS = *b.Timeout // 0: the default
	}
	internet, err := s.createInternet(b)
	if err != nil {
		return sandbox.Spec{}, err
	}
	n, err := networkFor(internet, b.Network)
	if err != nil {
		return sandbox.Spec{}, err
	}
	spec.Network = n
	if spec.Labels, err = withInternetLabel(b.Metadata, internet); err != nil {
		return sandbox.Spec{}, err
	}
	if spec.Labels, err = portLabels(spec.Labels, b.Network); err != nil { // ports.go
		return sandbox.Spec{}, err
	}
	return spec, nil
}

// template maps an E2B templateID onto a Paddock template: a name Paddock
// has is used; "base" and every other E2B name get the default template.
func (s *Server) template(id string) string {
	if id == "" || s.o.Templates == nil {
		return ""
	}
	if codeInterpreterTemplates[id] {
		id = codeTemplate // code.go; the default template when there is none
	}
	if _, err := s.o.Templates.Get(id); err == nil {
		return id
	}
	return ""
}

// isAddress reports an IP address or CIDR (anything else is a name).
func isAddress(s string) bool {
	if _, err := netip.ParsePrefix(s); err == nil {
		return true
	}
	_, err := netip.ParseAddr(s)
	return err == nil
}

// newSandbox is E2B's Sandbox answer (create, connect).
type newSandbox struct {
	SandboxID          string  `json:"sandboxID"`
	TemplateID         string  `json:"templateID"`
	ClientID           string  `json:"clientID"`
	EnvdVersion        string  `json:"envdVersion"`
	EnvdAccessToken    string  `json:"envdAccessToken"`
	TrafficAccessToken *string `json:"trafficAccessToken"`
	Domain             *string `json:"domain"`
}

func (s *Server) createSandbox(w http.ResponseWriter, r *http.Request, sc rights.Scope) {
	var b createBody
	if err := decodeBody(r, &b); err != nil {
		writeAPIError(w, err)
		return
	}
	spec, err := s.specFor(&b)
	if err == nil && spec.Template == "" && b.TemplateID != "" && s.o.Builder != nil {
		// A template of the key's tenant (one built through Template.build).
		if _, terr := s.o.Builder.Resolve(sc.Tenant, b.TemplateID); terr == nil {
			spec.Template = b.TemplateID
		}
	}
	if err == nil && b.TemplateID != "" {
		// A snapshot's id (state.go) names it: the sandbox starts with its files.
		if _, serr := s.m.GetSnapshot(r.Context(), sc, b.TemplateID); serr == nil {
			spec.Snapshot, spec.Template = b.TemplateID, ""
		}
	}
	if err != nil {
		writeAPIError(w, err)
		return
	}
	if spec.Network != nil {
		if err := s.bindRuleSecrets(r.Context(), sc, spec.Network.Inject); err != nil { // transform.go
			writeAPIError(w, err)
			return
		}
	}
	sb, err := s.m.Create(r.Context(), sc, spec)
	if err != nil {
		writeAPIError(w, err)
		return
	}
	tok, err := s.mintToken(sc, sb.ID)
	if err != nil {
		// A sandbox nobody can reach is of no use: take it back.
		_ = s.m.Delete(r.Context(), sc, sb.ID)
		writeAPIError(w, err)
		return
	}
	s.warmCode(r, sc, sb.ID, b.TemplateID)
	writeJSON(w, http.StatusCreated, newSandbox{SandboxID: sb.ID, TemplateID: sb.Spec.Template, ClientID: clientID,
		EnvdVersion: EnvdVersion, EnvdAccessToken: tok, TrafficAccessToken: &tok, Domain: s.domain()})
}

// running returns a sandbox the scope may act on with need and that runs:
// E2B has no word for a sandbox whose agent died, so it is not found (it
// can still be killed).
func (s *Server) running(r *http.Request, sc sandbox.Scope, id string, need rights.Right) (sandbox.Sandbox, error) {
	sb, err := s.m.Resolve(r.Context(), sc, id, need)
	if err != nil {
		return sb, err
	}
	if sb.State != sandbox.StateRunning {
		return sandbox.Sandbox{}, errs.NotFound("sandbox %s is not running: %s", id, sb.Reason)
	}
	return sb, nil
}

// sandboxInfo is ListedSandbox and SandboxDetail.
type sandboxInfo struct {
	SandboxID           string            `json:"sandboxID"`
	TemplateID          string            `json:"templateID"`
	ClientID            string            `json:"clientID"`
	StartedAt           string            `json:"startedAt"`
	EndAt               string            `json:"endAt"`
	EnvdVersion         string            `json:"envdVersion"`
	CPUCount            int               `json:"cpuCount"`
	MemoryMB            int64             `json:"memoryMB"`
	DiskSizeMB          int64             `json:"diskSizeMB"`
	Metadata            map[string]string `json:"metadata"`
	State               string            `json:"state"`
	VolumeMounts        []struct{}        `json:"volumeMounts"`
	Domain              *string           `json:"domain,omitempty"`
	AllowInternetAccess *bool             `json:"allowInternetAccess,omitempty"`
	Network             *infoNetwork      `json:"network,omitempty"`
	Lifecycle           *lifecycle        `json:"lifecycle,omitempty"`
}

type infoNetwork struct {
	AllowOut []string             `json:"allowOut,omitempty"`
	DenyOut  []string             `json:"denyOut,omitempty"`
	Rules    map[string][]e2bRule `json:"rules,omitempty"` // transform.go
}

type lifecycle struct {
	AutoResume bool   `json:"autoResume"`
	OnTimeout  string `json:"onTimeout"`
}

func info(sb sandbox.Sandbox, detail bool) sandboxInfo {
	meta := hidePortLabels(userMetadata(sb.Spec.Labels))
	cpu := int(math.Ceil(sb.Spec.CPU))
	if cpu < 1 {
		cpu = 1
	}
	out := sandboxInfo{SandboxID: sb.ID, TemplateID: sb.Spec.Template, ClientID: clientID,
		StartedAt: sb.CreatedAt.UTC().Format(time.RFC3339Nano), EndAt: sb.ExpiresAt.UTC().Format(time.RFC3339Nano),
		EnvdVersion: EnvdVersion, CPUCount: cpu, MemoryMB: sb.Spec.MemoryMB, DiskSizeMB: sb.Spec.DiskMB,
		Metadata: meta, State: stateOf(sb), VolumeMounts: []struct{}{}}
	if !detail {
		return out
	}
	out.Lifecycle = &lifecycle{OnTimeout: wire.OnTimeoutKill, AutoResume: sb.Spec.AutoResume}
	if sb.Spec.OnTimeout == wire.OnTimeoutPause {
		out.Lifecycle.OnTimeout = wire.OnTimeoutPause
	}
	mode := sandbox.NetNone
	if n := sb.Spec.Network; n != nil && n.Mode != "" {
		mode = n.Mode
	}
	yes, no := true, false
	switch mode {
	case sandbox.NetOpen:
		out.AllowInternetAccess = &yes
		if nw := sb.Spec.Network; len(nw.DenyCIDR) > 0 {
			out.Network = &infoNetwork{AllowOut: append(append([]string{}, nw.Allow...), hostAddrs(nw.AllowCIDR)...),
				DenyOut: hostAddrs(nw.DenyCIDR)}
		}
	case sandbox.NetAllowlist:
		out.AllowInternetAccess = &no
		out.Network = &infoNetwork{AllowOut: append(append([]string{}, sb.Spec.Network.Allow...), hostAddrs(sb.Spec.Network.AllowCIDR)...),
			DenyOut: []string{allTraffic}}
	default:
		out.AllowInternetAccess = &no
	}
	if n := sb.Spec.Network; n != nil && len(n.Inject) > 0 {
		if out.Network == nil {
			out.Network = &infoNetwork{}
		}
		out.Network.Rules = infoRules(n.Inject)
	}
	return out
}

func (s *Server) getSandbox(w http.ResponseWriter, r *http.Request, sc rights.Scope) {
	sb, err := s.visible(r, sc, r.PathValue("sandboxID"), rights.Read)
	if err != nil {
		writeAPIError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, info(sb, true))
}

func (s *Server) killSandbox(w http.ResponseWriter, r *http.Request, sc rights.Scope) {
	id := r.PathValue("sandboxID")
	if err := s.m.Delete(r.Context(), sc, id); err != nil {
		writeAPIError(w, err)
		return
	}
	s.watch.dropSandbox(id)
	s.signed.drop(id)
	w.WriteHeader(http.StatusNoContent)
}

type timeoutBody struct {
	Timeout *int64 `json:"timeout"`
}

func (s *Server) setTimeout(w http.ResponseWriter, r *http.Request, sc rights.Scope) {
	var b timeoutBody
	if err := decodeBody(r, &b); err != nil {
		writeAPIError(w, err)
		return
	}
	if b.Timeout == nil || *b.Timeout <= 0 {
		writeAPIError(w, errs.Invalid("timeout (seconds, at least 1) is required"))
		return
	}
	id := r.PathValue("sandboxID")
	if _, err := s.running(r, sc, id, rights.Write); err != nil {
		writeAPIError(w, err)
		return
	}
	if _, err := s.m.SetTimeout(r.Context(), sc, id, seconds(*b.Timeout)); err != nil {
		writeAPIError(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// seconds converts without overflow (the manager bounds the result).
func seconds(n int64) time.Duration {
	if n > int64(math.MaxInt64/time.Second) {
		return math.MaxInt64
	}
	return time.Duration(n) * time.Second
}

// extend moves a sandbox's end to now+d unless it ends later already.
func (s *Server) extend(r *http.Request, sc sandbox.Scope, sb sandbox.Sandbox, d time.Duration) (sandbox.Sandbox, error) {
	if time.Now().Add(d).Before(sb.ExpiresAt) {
		return sb, nil
	}
	return s.m.SetTimeout(r.Context(), sc, sb.ID, d)
}

func (s *Server) refresh(w http.ResponseWriter, r *http.Request, sc rights.Scope) {
	var b struct {
		Duration *int64 `json:"duration"`
	}
	if err := decodeBody(r, &b); err != nil {
		writeAPIError(w, err)
		return
	}
	d := int64(60)
	if b.Duration != nil {
		d = *b.Duration
	}
	if d <= 0 {
		writeAPIError(w, errs.Invalid("duration must be at least 1 second"))
		return
	}
	sb, err := s.running(r, sc, r.PathValue("sandboxID"), rights.Write)
	if err == nil {
		_, err = s.extend(r, sc, sb, seconds(d))
	}
	if err != nil {
		writeAPIError(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// defaultConnectTimeout is ConnectSandboxV2's default.
const defaultConnectTimeout = 300

func (s *Server) connectSandbox(w http.ResponseWriter, r *http.Request, sc rights.Scope) {
	var b struct {
		Timeout *int64 `json:"timeout"`
		Memory  *bool  `json:"memory"` // how to resume a paused sandbox: false is a reboot (refused)
	}
	if err := decodeBody(r, &b); err != nil {
		writeAPIError(w, err)
		return
	}
	t := int64(defaultConnectTimeout)
	if b.Timeout != nil {
		t = *b.Timeout
	}
	if t < 0 {
		writeAPIError(w, errs.Invalid("timeout must not be negative"))
		return
	}
	sb, err := s.visible(r, sc, r.PathValue("sandboxID"), rights.Read)
	if err == nil {
		sb, err = s.wake(r, sc, sb, b.Memory)
	}
	// Connecting renews the sandbox's life only for a caller who may
	// renew it: a read-only key connects without keeping it alive.
	if err == nil && t > 0 && sc.Can(rights.Write) {
		sb, err = s.extend(r, sc, sb, seconds(t))
	}
	if err != nil {
		writeAPIError(w, err)
		return
	}
	s.answerSandbox(w, sc, sb, http.StatusOK)
}

// answerSandbox writes E2B's Sandbox answer with a fresh access token.
func (s *Server) answerSandbox(w http.ResponseWriter, sc sandbox.Scope, sb sandbox.Sandbox, status int) {
	tok, err := s.mintToken(sc, sb.ID)
	if err != nil {
		writeAPIError(w, err)
		return
	}
	writeJSON(w, status, newSandbox{SandboxID: sb.ID, TemplateID: sb.Spec.Template, ClientID: clientID,
		EnvdVersion: EnvdVersion, EnvdAccessToken: tok, TrafficAccessToken: &tok, Domain: s.domain()})
}

func (s *Server) setNetwork(w http.ResponseWriter, r *http.Request, sc rights.Scope) {
	var b e2bNetwork
	if err := decodeBody(r, &b); err != nil {
		writeAPIError(w, err)
		return
	}
	if err := portUpdate(&b); err != nil { // ports.go
		writeAPIError(w, err)
		return
	}
	id := r.PathValue("sandboxID")
	sb, err := s.running(r, sc, id, rights.Network)
	if err != nil {
		writeAPIError(w, err)
		return
	}
	internet := baseInternet(sb)
	if b.AllowInternetAccess != nil {
		internet = *b.AllowInternetAccess
	}
	n, err := networkFor(internet, &b)
	if err == nil {
		err = s.bindRuleSecrets(r.Context(), sc, n.Inject) // transform.go
	}
	if err != nil {
		writeAPIError(w, err)
		return
	}
	if _, err := s.m.SetNetwork(r.Context(), sc, id, *n); err != nil {
		writeAPIError(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
