package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// parseSizeMB reads "512M", "2G", "1.5GiB", "300MB" or a bare number of
// mebibytes. Decimal and binary suffixes are both taken as binary: nobody
// means 10^9 when sizing a sandbox.
func parseSizeMB(s string) (int64, error) {
	t := strings.TrimSpace(strings.ToUpper(s))
	if t == "" {
		return 0, fmt.Errorf("empty size")
	}
	mult := 1.0
	for _, suf := range []struct {
		s string
		m float64
	}{{"TIB", 1 << 20}, {"GIB", 1 << 10}, {"MIB", 1}, {"KIB", 1.0 / 1024},
		{"TB", 1 << 20}, {"GB", 1 << 10}, {"MB", 1}, {"KB", 1.0 / 1024},
		{"T", 1 << 20}, {"G", 1 << 10}, {"M", 1}, {"K", 1.0 / 1024}} {
		if strings.HasSuffix(t, suf.s) {
			mult = suf.m
			t = strings.TrimSpace(strings.TrimSuffix(t, suf.s))
			break
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || v < 0 || v != v || v > 1<<40 {
		return 0, fmt.Errorf("invalid size %q (try 512M or 2G)", s)
	}
	mb := v * mult
	if mb > 0 && mb < 1 {
		mb = 1
	}
	return int64(mb), nil
}

// parseDuration reads a Go duration ("90s", "5m") or a bare number of
// seconds.
func parseDuration(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n < 0 || n > 1<<31 {
			return 0, fmt.Errorf("invalid duration %q", s)
		}
		return time.Duration(n) * time.Second, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("invalid duration %q (try 30s, 5m or 2h)", s)
	}
	return d, nil
}
