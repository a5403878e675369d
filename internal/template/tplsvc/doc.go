// Package tplsvc is the template service: the one place that acts on
// templates for callers (REST, CLI through REST, MCP). It owns the
// registry client, the layer store's use by image templates and the
// Dockerfile builder, and applies tenancy (a tenant's templates are its
// own; admins publish shared ones), quotas (count and bytes per tenant)
// and audit events (pull, import, build with the Dockerfile's digest,
// push, export, delete). docs/templates.md describes the model.
package tplsvc
