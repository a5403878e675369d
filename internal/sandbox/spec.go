package sandbox

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/paddockhq/paddock/internal/egress/policy"
	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/wire"
)

// Spec is what a caller asks for (wire.Spec). Zero fields take the
// server's defaults; Limits.Normalize validates one. A spec with Browser
// gets larger default limits (browser.go).
type Spec = wire.Spec

// Network is the egress policy of a sandbox (docs/network.md); its inject
// rules are validated against it (inject.go).
type Network = wire.Network

// Network modes (the egress policy's: policy.Mode*).
const (
	NetNone      = wire.NetNone
	NetAllowlist = wire.NetAllowlist
	NetOpen      = wire.NetOpen
)

// NormalizeNetwork validates n and returns it in canonical form (mode
// filled in, entries lower-cased and de-duplicated); nil means none.
func NormalizeNetwork(n *Network) (*Network, error) {
	if n == nil {
		return &Network{Mode: NetNone}, nil
	}
	p, err := policy.CompileDeny(n.Mode, n.Allow, n.AllowCIDR, n.DenyCIDR)
	if err != nil {
		return nil, errs.Invalid("%s", err.Error())
	}
	out := &Network{Mode: p.Mode}
	if p.Mode == NetOpen && len(p.DenyCIDRs()) > 0 {
		out.DenyCIDR = p.DenyCIDRs()
	}
	if p.Mode == NetAllowlist || out.DenyCIDR != nil {
		out.Allow, out.AllowCIDR = p.Allow(), p.CIDRs()
		if len(out.Allow) == 0 {
			out.Allow = nil
		}
		if len(out.AllowCIDR) == 0 {
			out.AllowCIDR = nil
		}
	}
	if out.Inject, err = normalizeInject(p, n.Inject); err != nil { // inject.go
		return nil, err
	}
	return out, nil
}

// runtimeNetwork is the policy handed to the backend (nil: none).
func runtimeNetwork(n *Network) *runtime.NetPolicy {
	if n == nil || n.Mode == NetNone || n.Mode == "" {
		return nil
	}
	return &runtime.NetPolicy{Mode: n.Mode, Allow: n.Allow, AllowCIDR: n.AllowCIDR, DenyCIDR: n.DenyCIDR, Intercept: injectHosts(n.Inject)}
}

// Limits bound what a spec may ask for and give the defaults.
type Limits struct {
	Default     Spec
	MaxCPU      float64
	MaxMemoryMB int64
	MaxDiskMB   int64
	MaxPids     int64
	MaxTimeout  time.Duration
}

// DefaultLimits are the embedded defaults: small, as the design asks.
func DefaultLimits(hostCPUs int) Limits {
	return Limits{
		Default:     Spec{Template: "host", CPU: 1, MemoryMB: 512, DiskMB: 1024, Pids: 512, TimeoutS: 300},
		MaxCPU:      float64(hostCPUs),
		MaxMemoryMB: 16 << 10,
		MaxDiskMB:   64 << 10,
		MaxPids:     16384,
		MaxTimeout:  24 * time.Hour,
	}
}

var (
	labelKeyRE = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9._/-]{0,62})$`)
	envKeyRE   = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,255}$`)
)

const (
	maxLabels     = 64
	maxLabelValue = 256
	maxEnv        = 256
	maxEnvValue   = 32 << 10
)

// FillDefaults sets the template, limits and timeout s leaves unset to
// d's.
func FillDefaults(s *Spec, d Spec) {
	if s.Template == "" {
		s.Template = d.Template
	}
	if s.CPU == 0 {
		s.CPU = d.CPU
	}
	if s.MemoryMB == 0 {
		s.MemoryMB = d.MemoryMB
	}
	if s.DiskMB == 0 {
		s.DiskMB = d.DiskMB
	}
	if s.Pids == 0 {
		s.Pids = d.Pids
	}
	if s.TimeoutS == 0 {
		s.TimeoutS = d.TimeoutS
	}
	if s.Runtime == "" {
		s.Runtime = d.Runtime
	}
}

// Normalize fills defaults and validates s against l, returning a clear
// invalid_argument error naming the first offending field.
func (l Limits) Normalize(s Spec) (Spec, error) {
	s = l.browserSpec(s)
	FillDefaults(&s, l.Default)
	switch {
	case s.CPU < 0.05 || s.CPU > l.MaxCPU:
		return s, errs.Invalid("cpu must be between 0.05 and %g cores", l.MaxCPU)
	case s.MemoryMB < 32 || s.MemoryMB > l.MaxMemoryMB:
		return s, errs.Invalid("memory_mb must be between 32 and %d", l.MaxMemoryMB)
	case s.DiskMB < 16 || s.DiskMB > l.MaxDiskMB:
		return s, errs.Invalid("disk_mb must be between 16 and %d", l.MaxDiskMB)
	case s.Pids < 8 || s.Pids > l.MaxPids:
		return s, errs.Invalid("pids must be between 8 and %d", l.MaxPids)
	case s.TimeoutS < 1 || time.Duration(s.TimeoutS)*time.Second > l.MaxTimeout:
		return s, errs.Invalid("timeout_s must be between 1 and %d", int64(l.MaxTimeout/time.Second))
	}
	if len(s.Labels) > maxLabels {
		return s, errs.Invalid("at most %d labels", maxLabels)
	}
	for k, v := range s.Labels {
		if !labelKeyRE.MatchString(k) {
			return s, errs.Invalid("label key %q is invalid (letters, digits, . _ / -; at most 63)", clip(k))
		}
		if len(v) > maxLabelValue || !utf8.ValidString(v) || strings.ContainsRune(v, 0) {
			return s, errs.Invalid("label %q has an invalid value", k)
		}
	}
	if err := ValidateEnv(s.Env); err != nil {
		return s, err
	}
	switch s.Runtime {
	case "", wire.RuntimeNative, wire.RuntimeGVisor:
	default:
		return s, errs.Invalid("runtime %q is unknown: want %q or %q", clip(s.Runtime), wire.RuntimeNative, wire.RuntimeGVisor)
	}
	n, err := NormalizeNetwork(s.Network)
	if err != nil {
		return s, err
	}
	s.Network = n
	if err := l.normalizeLifecycle(&s); err != nil { // pause.go
		return s, err
	}
	if err := normalizeVolumes(&s); err != nil { // volumes.go
		return s, err
	}
	return s, nil
}

// ValidateEnv checks environment variable names and values.
func ValidateEnv(env map[string]string) error {
	if len(env) > maxEnv {
		return errs.Invalid("at most %d environment variables", maxEnv)
	}
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !envKeyRE.MatchString(k) {
			return errs.Invalid("environment variable name %q is invalid", clip(k))
		}
		v := env[k]
		if len(v) > maxEnvValue || strings.ContainsRune(v, 0) {
			return errs.Invalid("environment variable %s has an invalid value (NUL or over 32 KiB)", k)
		}
	}
	return nil
}

func clip(s string) string {
	if len(s) > 64 {
		s = s[:64] + "…"
	}
	return fmt.Sprintf("%s", strings.ToValidUTF8(s, "?"))
}
