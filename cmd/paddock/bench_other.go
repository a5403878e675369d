//go:build !linux

package main

// The embedded bench needs Linux (newEmbeddedBench says so); these are
// never reached elsewhere.

func benchNetwork(*serveFlags) (func(), string) { return func() {}, "" }

func removeBenchDir(string, string) {}
