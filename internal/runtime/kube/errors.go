package kube

import (
	"context"
	"errors"
	"net"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/paddockhq/paddock/internal/errs"
)

// apiErr turns a failed API call (verb on resource) into an error a user
// can act on: missing RBAC rights are named, an unreachable API says so.
func apiErr(ns, verb, resource string, err error) error {
	if err == nil {
		return nil
	}
	switch {
	case apierrors.IsForbidden(err):
		return errs.Wrap(errs.CodeUnavailable, err,
			"the kube runtime may not %s %s in namespace %s (RBAC: grant the verb in its Role)", verb, resource, ns)
	case apierrors.IsUnauthorized(err):
		return errs.Wrap(errs.CodeUnavailable, err, "the Kubernetes API refused the kube runtime's credentials")
	case apierrors.IsNotFound(err):
		return errs.Wrap(errs.CodeNotFound, err, "%s not found in namespace %s", resource, ns)
	case apierrors.IsAlreadyExists(err):
		return errs.Wrap(errs.CodeConflict, err, "%s already exists in namespace %s", resource, ns)
	case apierrors.IsTooManyRequests(err):
		return errs.Wrap(errs.CodeRateLimited, err, "the Kubernetes API is throttling the kube runtime")
	case apierrors.IsInvalid(err):
		return errs.Wrap(errs.CodeInvalid, err, "the cluster refused the sandbox's %s: %v", resource, err)
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return err
	}
	var ne net.Error
	if errors.As(err, &ne) || apierrors.IsServerTimeout(err) || apierrors.IsServiceUnavailable(err) || apierrors.IsInternalError(err) {
		return errs.Wrap(errs.CodeUnavailable, err, "the Kubernetes API is unreachable")
	}
	return errs.Wrap(errs.CodeUnavailable, err, "the Kubernetes API failed to %s %s", verb, resource)
}
