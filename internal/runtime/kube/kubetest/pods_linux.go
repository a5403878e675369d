//go:build linux

package kubetest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// RunPod starts a plain busybox Pod (no Paddock involved) running argv
// and returns it once it runs with an address: the control group of
// network-policy tests.
func (c *Cluster) RunPod(ctx context.Context, ns, name string, labels map[string]string, argv ...string) (*corev1.Pod, error) {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
		Spec: corev1.PodSpec{
			RestartPolicy:                 corev1.RestartPolicyNever,
			AutomountServiceAccountToken:  ptrTo(false),
			TerminationGracePeriodSeconds: ptrTo(int64(0)),
			Containers: []corev1.Container{{Name: "main", Image: c.BusyboxImage, Command: argv,
				ImagePullPolicy: corev1.PullIfNotPresent}},
		},
	}
	if _, err := c.Client.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	for {
		got, err := c.Client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		if got.Status.Phase == corev1.PodRunning && got.Status.PodIP != "" {
			return got, nil
		}
		if got.Status.Phase == corev1.PodFailed || got.Status.Phase == corev1.PodSucceeded {
			return nil, fmt.Errorf("pod %s/%s ended: %s %s", ns, name, got.Status.Reason, got.Status.Message)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("pod %s/%s not running: %w", ns, name, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// ExecPod runs argv in a plain Pod's container with kubectl exec.
func (c *Cluster) ExecPod(ctx context.Context, ns, name string, argv ...string) ([]byte, error) {
	return c.Kubectl(ctx, append([]string{"exec", "-n", ns, name, "--"}, argv...)...)
}

func ptrTo[T any](v T) *T { return &v }

// OrphanPodDirs lists the kubelet's pod directories (volumes, emptyDirs,
// Secret mounts) of Pods the API no longer has: the kubelet removes them
// once a deleted Pod's containers are gone.
func (c *Cluster) OrphanPodDirs(ctx context.Context) ([]string, error) {
	pods, err := c.Client.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	live := map[string]bool{}
	for _, p := range pods.Items {
		live[string(p.UID)] = true
	}
	ents, err := os.ReadDir(filepath.Join(c.Dir, "kubelet", "pods"))
	if err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if !live[e.Name()] {
			out = append(out, e.Name())
		}
	}
	return out, nil
}
