package kube

import (
	"context"
	"fmt"
	"strings"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/paddockhq/paddock/internal/errs"
)

// need are the rights the runtime uses, all in its namespace: the Role
// in docs/kubernetes.md grants exactly these.
var need = []struct{ group, resource, sub, verb string }{
	{"", "pods", "", "create"}, {"", "pods", "", "get"}, {"", "pods", "", "list"}, {"", "pods", "", "watch"},
	{"", "pods", "", "delete"}, {"", "pods", "resize", "update"},
	{"", "secrets", "", "create"}, {"", "secrets", "", "get"}, {"", "secrets", "", "list"},
	{"", "secrets", "", "patch"}, {"", "secrets", "", "delete"},
	{"", "events", "", "list"},
	{"networking.k8s.io", "networkpolicies", "", "get"}, {"networking.k8s.io", "networkpolicies", "", "create"},
	{"networking.k8s.io", "networkpolicies", "", "update"},
}

// checkAccess asks the API (SelfSubjectAccessReview) for each right and
// names every one missing; it is also the first contact with the cluster,
// so an unreachable API or refused credentials fail here, clearly.
func (b *Backend) checkAccess(ctx context.Context) error {
	var missing []string
	for _, n := range need {
		r := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
			ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: b.o.Namespace, Group: n.group,
				Resource: n.resource, Subresource: n.sub, Verb: n.verb}}}
		res, err := b.cs.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, r, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("kube: cannot reach the Kubernetes API at %s: %w", b.o.Config.Host, apiErr(b.o.Namespace, "create", "selfsubjectaccessreviews", err))
		}
		if !res.Status.Allowed {
			what := n.resource
			if n.sub != "" {
				what += "/" + n.sub
			}
			missing = append(missing, n.verb+" "+what)
		}
	}
	if len(missing) > 0 {
		return errs.New(errs.CodeUnavailable, "kube: the runtime's credentials lack rights in namespace %s: %s",
			b.o.Namespace, strings.Join(missing, ", "))
	}
	return nil
}
