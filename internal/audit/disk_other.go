//go:build !linux

package audit

import "errors"

// errDiskUnsupported: the low-disk alarm is Linux-only.
var errDiskUnsupported = errors.New("audit: free space is only measured on Linux")

func volumeSpace(string) (free, total uint64, err error) { return 0, 0, errDiskUnsupported }
