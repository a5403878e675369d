//go:build !linux

package kubetest

import (
	"context"
	"fmt"
)

// Cluster is a running single-node cluster (Linux only).
type Cluster struct{}

// Options configure Start.
type Options struct{}

// Available reports why this machine cannot run the cluster.
func Available(string) error { return fmt.Errorf("%w: Linux only", ErrUnavailable) }

// Start fails: the cluster needs Linux.
func Start(context.Context, Options) (*Cluster, error) { return nil, Available("") }

// Close does nothing.
func (c *Cluster) Close() error { return nil }

const janitorEnv = "PADDOCK_KUBETEST_JANITOR"

func runJanitor() int { return 0 }
