package kube

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// podState is what a Pod's status says about its sandbox.
type podState struct {
	running bool   // the guest container runs and the Pod has an address
	ip      string // the Pod's address
	// failed, when set, is why the sandbox cannot come up or is gone, in
	// the cluster's words.
	failed string
	// progress describes a Pod still on its way (for a timeout's error).
	progress string
}

// Waiting reasons after which the kubelet will not get the sandbox
// running without someone changing something.
var fatalWaiting = map[string]string{
	"ErrImagePull":               "cannot pull image",
	"ImagePullBackOff":           "cannot pull image",
	"InvalidImageName":           "invalid image name",
	"ErrImageNeverPull":          "image not present on the node and pull policy is Never",
	"CreateContainerConfigError": "cannot configure the container",
	"CreateContainerError":       "cannot create the container",
	"RunContainerError":          "cannot start the container",
	"CrashLoopBackOff":           "the container keeps crashing",
}

const maxReason = 512

// readPodState interprets p's status.
func readPodState(p *corev1.Pod) podState {
	var s podState
	s.ip = p.Status.PodIP
	if p.DeletionTimestamp != nil {
		s.failed = "the sandbox's Pod was deleted"
		return s
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			s.failed = clip("the cluster cannot schedule the sandbox: " + c.Message)
			return s
		}
	}
	for _, cs := range p.Status.InitContainerStatuses {
		if w := cs.State.Waiting; w != nil {
			if what, ok := fatalWaiting[w.Reason]; ok {
				s.failed = clip(fmt.Sprintf("guest image %s: %s (%s): %s", cs.Image, what, w.Reason, w.Message))
				return s
			}
			s.progress = "initializing: " + w.Reason
		}
		if t := cs.State.Terminated; t != nil && t.ExitCode != 0 {
			s.failed = clip(fmt.Sprintf("the sandbox's init container failed (exit code %d, %s): %s", t.ExitCode, t.Reason, strings.TrimSpace(t.Message)))
			return s
		}
	}
	for _, cs := range p.Status.ContainerStatuses {
		if cs.Name != containerName {
			continue
		}
		switch {
		case cs.State.Waiting != nil:
			w := cs.State.Waiting
			if what, ok := fatalWaiting[w.Reason]; ok {
				s.failed = clip(fmt.Sprintf("image %s: %s (%s): %s", cs.Image, what, w.Reason, w.Message))
				return s
			}
			s.progress = "starting: " + w.Reason
		case cs.State.Terminated != nil:
			s.failed = clip(terminated("the sandbox's agent exited", cs.State.Terminated))
			return s
		case cs.State.Running != nil:
			s.running = s.ip != ""
		}
	}
	switch p.Status.Phase {
	case corev1.PodFailed:
		msg := "the sandbox's Pod failed"
		if p.Status.Reason != "" {
			msg += " (" + p.Status.Reason + ")"
		}
		if p.Status.Message != "" {
			msg += ": " + p.Status.Message
		}
		s.failed, s.running = clip(msg), false
	case corev1.PodSucceeded:
		s.failed, s.running = "the sandbox's agent exited", false
	case corev1.PodPending:
		if s.progress == "" {
			s.progress = "pending"
			for _, c := range p.Status.Conditions {
				if c.Status != corev1.ConditionTrue && c.Reason != "" {
					s.progress = fmt.Sprintf("pending: %s %s: %s", c.Type, c.Reason, c.Message)
				}
			}
		}
	}
	return s
}

func terminated(prefix string, t *corev1.ContainerStateTerminated) string {
	msg := fmt.Sprintf("%s (exit code %d", prefix, t.ExitCode)
	if t.Signal != 0 {
		msg += fmt.Sprintf(", signal %d", t.Signal)
	}
	if t.Reason != "" {
		msg += ", " + t.Reason
	}
	msg += ")"
	if m := strings.TrimSpace(t.Message); m != "" {
		msg += ": " + m
	}
	return msg
}

// clip bounds a reason taken from the cluster (a container's termination
// message is its log's tail).
func clip(s string) string {
	if len(s) > maxReason {
		return s[:maxReason] + "…"
	}
	return s
}
