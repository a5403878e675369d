//go:build !linux

package disk
