//go:build !linux

package durable

import "errors"

// Usage is du; it needs Linux's stat.
func Usage(string) (int64, error) { return 0, errors.ErrUnsupported }
