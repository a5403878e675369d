//go:build !linux

package cgroup

import (
	"context"
	"fmt"

	"github.com/paddockhq/paddock/internal/errs"
)

var errNotLinux = fmt.Errorf("cgroup: control groups exist only on Linux: %w", errs.ErrUnsupported)

// Host is the cgroup layout of this machine; there is none off Linux.
type Host struct{}

// Detect always fails off Linux, wrapping errs.ErrUnsupported.
func Detect(root, prefix string) (*Host, error) { return nil, errNotLinux }

// Version reports 0: no cgroups.
func (h *Host) Version() Version { return 0 }

// Create fails off Linux.
func (h *Host) Create(id string, l Limits, uid, gid int) (*Group, error) { return nil, errNotLinux }

// Open fails off Linux.
func (h *Host) Open(id string) (*Group, error) { return nil, errNotLinux }

// RemovePrefix fails off Linux.
func (h *Host) RemovePrefix() error { return errNotLinux }

// List fails off Linux.
func (h *Host) List() ([]string, error) { return nil, errNotLinux }

// Group is one sandbox's control group(s).
type Group struct{}

// AddProc fails off Linux.
func (g *Group) AddProc(pid int) error { return errNotLinux }

// SetLimits fails off Linux.
func (g *Group) SetLimits(l Limits) error { return errNotLinux }

// Stats fails off Linux.
func (g *Group) Stats() (Stats, error) { return Stats{}, errNotLinux }

// Procs fails off Linux.
func (g *Group) Procs() ([]int, error) { return nil, errNotLinux }

// Destroy fails off Linux.
func (g *Group) Destroy() error { return errNotLinux }

// DelegatedPaths returns nothing off Linux.
func (g *Group) DelegatedPaths() map[string]string { return nil }

// Delegated is the guest-side view of a delegated group.
type Delegated struct{}

// NewDelegated returns a Delegated whose methods fail off Linux.
func NewDelegated(version Version, pidsDir, memoryDir int) *Delegated { return &Delegated{} }

// Sub is one exec's sub-group.
type Sub struct{}

// NewSub fails off Linux.
func (d *Delegated) NewSub(name string) (*Sub, error) { return nil, errNotLinux }

// Spawn fails off Linux.
func (s *Sub) Spawn(start func(cgroupFD int) error) error { return errNotLinux }

// Procs fails off Linux.
func (s *Sub) Procs() ([]int, error) { return nil, errNotLinux }

// Kill fails off Linux.
func (s *Sub) Kill() (int, error) { return 0, errNotLinux }

// Remove fails off Linux.
func (s *Sub) Remove() (bool, error) { return false, errNotLinux }

// OOMKills reports -1: unavailable.
func (d *Delegated) OOMKills() int64 { return -1 }

// FavorDynMods is Linux-only.
func FavorDynMods() (bool, error) { return false, errNotLinux }

// JoinThread is Linux-only.
func (d *Delegated) JoinThread() error { return errNotLinux }

// Claim fails off Linux.
func (h *Host) Claim() (func() error, error) { return nil, errNotLinux }

// Freeze fails off Linux.
func (g *Group) Freeze(ctx context.Context) error { return errNotLinux }

// Thaw fails off Linux.
func (g *Group) Thaw(ctx context.Context) error { return errNotLinux }

// Frozen fails off Linux.
func (g *Group) Frozen() (bool, error) { return false, errNotLinux }
