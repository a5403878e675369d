// Package tenant holds Paddock's tenants and enforces their quotas.
//
// A tenant is a row (name, quotas, created) in the tenants table (the
// package's own Migrations). Its Quotas bound what its callers may do:
// counts and totals across its running sandboxes (sandboxes, CPU, memory),
// a create rate (token bucket; refusals carry a Retry-After delay),
// per-sandbox ceilings (cpu, memory, disk, pids, timeout), network policy
// (allowed modes and domains), whether secrets and exposed ports may be
// used, and defaults that fill an unset spec.
//
// Admission implements sandbox.Admission: the sandbox manager asks it
// before every create and timeout change. Every refusal names the tenant
// and the ceiling; count, total and rate quotas answer 429, per-sandbox
// ceilings and policy 403. Zero (unset) quota fields mean "no tenant
// limit": the server's own limits still apply.
package tenant
