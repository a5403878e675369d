// Package openat2 is how the guest's services resolve paths: the kernel's
// openat2(2) natively, and a user-space walk with the same answers inside
// gVisor, which does not implement openat2. The files and process
// services both open through Open, so the agent switches every resolution
// at once (Emulate) before it serves anything.
package openat2
