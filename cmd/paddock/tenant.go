package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/paddockhq/paddock/client"
)

func newTenantCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{Use: "tenant", Short: "Manage tenants and their quotas (needs an admin key)"}
	cmd.AddCommand(newTenantCreateCmd(e), newTenantLsCmd(e), newTenantShowCmd(e), newTenantSetCmd(e))
	return cmd
}

// quotaFlags are the quota options of tenant create and set; only the
// flags given change anything.
type quotaFlags struct {
	fs                                       *pflag.FlagSet
	maxSandboxes, createBurst                int
	maxPids, defPids                         int64
	maxTotalCPU, perMinute, maxCPU, defCPU   float64
	maxTotalMem, maxMem, maxDisk, maxTimeout string
	defTemplate, defMem, defDisk, defTimeout string
	defRuntime                               string
	modes, domains, runtimes                 []string
	denySecrets, denyPorts                   bool
}

func (q *quotaFlags) register(fs *pflag.FlagSet) {
	q.fs = fs
	fs.IntVar(&q.maxSandboxes, "max-sandboxes", 0, "sandboxes running at once (0: no tenant limit)")
	fs.Float64Var(&q.maxTotalCPU, "max-total-cpu", 0, "CPU cores across running sandboxes")
	fs.StringVar(&q.maxTotalMem, "max-total-memory", "", "memory across running sandboxes, e.g. 16G")
	fs.Float64Var(&q.perMinute, "create-per-minute", 0, "sandbox creations per minute (beyond it: 429 with Retry-After)")
	fs.IntVar(&q.createBurst, "create-burst", 0, "creations allowed at once (default: the per-minute rate)")
	fs.Float64Var(&q.maxCPU, "max-cpu", 0, "CPU cores per sandbox")
	fs.StringVar(&q.maxMem, "max-memory", "", "memory per sandbox, e.g. 4G")
	fs.StringVar(&q.maxDisk, "max-disk", "", "disk per sandbox, e.g. 8G")
	fs.Int64Var(&q.maxPids, "max-pids", 0, "processes per sandbox")
	fs.StringVar(&q.maxTimeout, "max-timeout", "", "life of a sandbox, e.g. 2h")
	fs.StringArrayVar(&q.modes, "network-mode", nil, "allowed network mode: none, allowlist, open (repeatable; none is always allowed; \"\" clears)")
	fs.StringArrayVar(&q.domains, "allow-domain", nil, "domain sandboxes may be allowed to reach: example.com or *.example.com (repeatable; \"\" clears)")
	fs.StringArrayVar(&q.runtimes, "runtime", nil, "allowed runtime: native, gvisor (repeatable; --runtime gvisor alone requires gVisor; \"\" clears)")
	fs.BoolVar(&q.denySecrets, "deny-secrets", false, "sandboxes may not use secrets")
	fs.BoolVar(&q.denyPorts, "deny-exposed-ports", false, "sandboxes may not expose ports")
	fs.StringVar(&q.defTemplate, "default-template", "", "template of a spec that names none")
	fs.Float64Var(&q.defCPU, "default-cpu", 0, "CPU of a spec that sets none")
	fs.StringVar(&q.defMem, "default-memory", "", "memory of a spec that sets none")
	fs.StringVar(&q.defDisk, "default-disk", "", "disk of a spec that sets none")
	fs.Int64Var(&q.defPids, "default-pids", 0, "pids of a spec that sets none")
	fs.StringVar(&q.defTimeout, "default-timeout", "", "life of a sandbox whose spec sets none")
	fs.StringVar(&q.defRuntime, "default-runtime", "", "runtime of a spec that names none")
}

// ifSet copies v into dst when its flag was given.
func ifSet[T any](set func(string) bool, flag string, v T, dst *T) {
	if set(flag) {
		*dst = v
	}
}

// apply writes the flags that were given into qu.
func (q *quotaFlags) apply(qu *client.Quotas) error {
	set := q.fs.Changed
	size := func(flag, v string, dst *int64) error {
		if !set(flag) {
			return nil
		}
		mb, err := parseSizeMB(v)
		if err != nil {
			return fmt.Errorf("--%s: %w", flag, err)
		}
		*dst = mb
		return nil
	}
	dur := func(flag, v string, dst *int64) error {
		if !set(flag) {
			return nil
		}
		d, err := parseDuration(v)
		if err != nil {
			return fmt.Errorf("--%s: %w", flag, err)
		}
		*dst = int64(d.Seconds())
		return nil
	}
	list := func(flag string, v []string, dst *[]string) {
		if !set(flag) {
			return
		}
		*dst = nil
		for _, x := range v {
			for _, p := range strings.Split(x, ",") {
				if p = strings.TrimSpace(p); p != "" {
					*dst = append(*dst, p)
				}
			}
		}
	}
	ifSet(set, "max-sandboxes", q.maxSandboxes, &qu.MaxSandboxes)
	ifSet(set, "max-total-cpu", q.maxTotalCPU, &qu.MaxTotalCPU)
	ifSet(set, "create-per-minute", q.perMinute, &qu.CreatePerMinute)
	ifSet(set, "create-burst", q.createBurst, &qu.CreateBurst)
	ifSet(set, "max-cpu", q.maxCPU, &qu.MaxCPU)
	ifSet(set, "max-pids", q.maxPids, &qu.MaxPids)
	ifSet(set, "deny-secrets", q.denySecrets, &qu.DenySecrets)
	ifSet(set, "deny-exposed-ports", q.denyPorts, &qu.DenyExposedPorts)
	ifSet(set, "default-template", q.defTemplate, &qu.Defaults.Template)
	ifSet(set, "default-cpu", q.defCPU, &qu.Defaults.CPU)
	ifSet(set, "default-pids", q.defPids, &qu.Defaults.Pids)
	ifSet(set, "default-runtime", q.defRuntime, &qu.Defaults.Runtime)
	list("runtime", q.runtimes, &qu.Runtimes)
	list("network-mode", q.modes, &qu.NetworkModes)
	list("allow-domain", q.domains, &qu.AllowedDomains)
	for _, err := range []error{
		size("max-total-memory", q.maxTotalMem, &qu.MaxTotalMemoryMB),
		size("max-memory", q.maxMem, &qu.MaxMemoryMB),
		size("max-disk", q.maxDisk, &qu.MaxDiskMB),
		dur("max-timeout", q.maxTimeout, &qu.MaxTimeoutS),
		size("default-memory", q.defMem, &qu.Defaults.MemoryMB),
		size("default-disk", q.defDisk, &qu.Defaults.DiskMB),
		dur("default-timeout", q.defTimeout, &qu.Defaults.TimeoutS),
	} {
		if err != nil {
			return err
		}
	}
	return nil
}

func newTenantCreateCmd(e *env) *cobra.Command {
	var q quotaFlags
	cmd := resultVerb(e, &cobra.Command{Use: "create NAME [quota flags]", Short: "Create a tenant", Args: cobra.ExactArgs(1)},
		"print JSON", func(ctx context.Context, args []string) (client.Tenant, error) {
			var qu client.Quotas
			if err := q.apply(&qu); err != nil {
				return client.Tenant{}, err
			}
			return e.client().CreateTenant(ctx, args[0], qu)
		}, e.printTenantName)
	q.register(cmd.Flags())
	return cmd
}

func newTenantSetCmd(e *env) *cobra.Command {
	var q quotaFlags
	cmd := resultVerb(e, &cobra.Command{
		Use:   "set NAME [quota flags]",
		Short: "Change a tenant's quotas (the flags given; 0 or \"\" removes a limit)",
		Args:  cobra.ExactArgs(1),
	}, "print JSON", func(ctx context.Context, args []string) (client.Tenant, error) {
		c := e.client()
		t, err := c.GetTenant(ctx, args[0])
		if err != nil {
			return t, err
		}
		qu := t.Quotas
		if err := q.apply(&qu); err != nil {
			return t, err
		}
		return c.SetQuotas(ctx, args[0], qu)
	}, e.printTenantName)
	q.register(cmd.Flags())
	return cmd
}

func (e *env) printTenantName(t client.Tenant) error { return e.println(t.Name) }

func newTenantShowCmd(e *env) *cobra.Command {
	return showVerb(e, &cobra.Command{Use: "show NAME", Short: "Show a tenant, its quotas and usage, as JSON", Args: cobra.ExactArgs(1)},
		func(ctx context.Context, args []string) (client.Tenant, error) {
			return e.client().GetTenant(ctx, args[0])
		})
}

func newTenantLsCmd(e *env) *cobra.Command {
	return listVerb(e, &cobra.Command{Use: "ls", Aliases: []string{"list"}, Short: "List tenants", Args: cobra.NoArgs},
		[]string{"NAME", "SANDBOXES", "CPU", "MEMORY", "CREATE RATE", "CREATED"},
		func(ctx context.Context, _ []string) ([]client.Tenant, error) { return e.client().ListTenants(ctx) },
		func(t client.Tenant) []string {
			var running, cpu, mem string
			if u := t.Usage; u != nil {
				running, cpu, mem = fmt.Sprint(u.Sandboxes), fmt.Sprintf("%g", u.CPU), fmt.Sprintf("%dM", u.MemoryMB)
			}
			q := t.Quotas
			return []string{t.Name, running + limitOf(float64(q.MaxSandboxes), ""),
				cpu + limitOf(q.MaxTotalCPU, ""), mem + limitOf(float64(q.MaxTotalMemoryMB), "M"),
				rateOf(q.CreatePerMinute), ago(t.CreatedAt)}
		})
}

func limitOf(v float64, unit string) string {
	if v == 0 {
		return "/-"
	}
	return fmt.Sprintf("/%g%s", v, unit)
}

func rateOf(perMinute float64) string {
	if perMinute == 0 {
		return "-"
	}
	return fmt.Sprintf("%g/min", perMinute)
}
