//go:build linux

package native

import goruntime "runtime"

// The backend joins sandboxes' mount namespaces on locked threads that it
// lets the runtime discard. The runtime never discards the main thread —
// it parks it — and /proc/self/{mountinfo,ns/*} describe the main thread,
// so a main thread left in a sandbox's namespace would mislead every later
// reader in this process. Keeping the main goroutine on the main thread
// means no other goroutine can ever be scheduled there.
func init() { goruntime.LockOSThread() }
