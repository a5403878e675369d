package kube

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestReadPodState(t *testing.T) {
	now := metav1.Now()
	running := corev1.ContainerStatus{Name: containerName, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}
	cases := []struct {
		name        string
		pod         corev1.Pod
		running     bool
		failed      string // substring; "" = not failed
		progressHas string
	}{
		{name: "running with an address", running: true, pod: corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.5",
			ContainerStatuses: []corev1.ContainerStatus{running}}}},
		{name: "running without an address yet", pod: corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodRunning,
			ContainerStatuses: []corev1.ContainerStatus{running}}}},
		{name: "unschedulable", failed: "cannot schedule the sandbox: 0/1 nodes are available: 1 Insufficient cpu",
			pod: corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled,
				Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable, Message: "0/1 nodes are available: 1 Insufficient cpu"}}}}},
		{name: "image pull", failed: `image reg/x:1: cannot pull image (ErrImagePull): not found`,
			pod: corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{Name: containerName,
				Image: "reg/x:1", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ErrImagePull", Message: "not found"}}}}}}},
		{name: "guest image pull", failed: "guest image g:1: cannot pull image (ImagePullBackOff)",
			pod: corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodPending, InitContainerStatuses: []corev1.ContainerStatus{{Name: initName,
				Image: "g:1", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff"}}}}}}},
		{name: "still creating", progressHas: "starting: ContainerCreating",
			pod: corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{Name: containerName,
				State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}}}}}},
		{name: "init failed", failed: "init container failed (exit code 1, Error): paddock-guest: copy tls.crt",
			pod: corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodPending, InitContainerStatuses: []corev1.ContainerStatus{{Name: initName,
				State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error", Message: "paddock-guest: copy tls.crt\n"}}}}}}},
		{name: "agent exited", failed: "agent exited (exit code 137, signal 9, OOMKilled)",
			pod: corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{Name: containerName,
				State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Signal: 9, Reason: "OOMKilled"}}}}}}},
		{name: "evicted", failed: "Pod failed (Evicted): Pod ephemeral local storage usage exceeds the total limit of containers 1Gi.",
			pod: corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodFailed, Reason: "Evicted",
				Message: "Pod ephemeral local storage usage exceeds the total limit of containers 1Gi."}}},
		{name: "deleted", failed: "Pod was deleted", pod: corev1.Pod{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &now},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.5", ContainerStatuses: []corev1.ContainerStatus{running}}}},
		{name: "huge message is clipped", failed: "…", pod: corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodFailed,
			Message: strings.Repeat("x", 10000)}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := readPodState(&tc.pod)
			if st.running != tc.running {
				t.Errorf("running = %v, want %v", st.running, tc.running)
			}
			if tc.failed == "" && st.failed != "" {
				t.Errorf("failed = %q, want none", st.failed)
			}
			if tc.failed != "" && !strings.Contains(st.failed, tc.failed) {
				t.Errorf("failed = %q, want it to contain %q", st.failed, tc.failed)
			}
			if len(st.failed) > maxReason+len("…") {
				t.Errorf("reason of %d bytes is not bounded", len(st.failed))
			}
			if tc.progressHas != "" && !strings.Contains(st.progress, tc.progressHas) {
				t.Errorf("progress = %q, want %q", st.progress, tc.progressHas)
			}
		})
	}
}
