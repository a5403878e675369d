// Command pause is the test cluster's pod sandbox image: it holds a pod's
// namespaces open and waits for a termination signal, as Kubernetes'
// pause does (there is no registry on the internet to pull that one from).
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGTERM, syscall.SIGINT)
	// As PID 1 of the pod, also reap orphans re-parented to it.
	signal.Notify(ch, syscall.SIGCHLD)
	for s := range ch {
		if s != syscall.SIGCHLD {
			os.Exit(0)
		}
		for {
			var ws syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
