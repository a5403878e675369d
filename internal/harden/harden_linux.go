//go:build linux

package harden

// SetNoNewPrivs sets PR_SET_NO_NEW_PRIVS on every thread.
func SetNoNewPrivs() error { panic("helper: implement") }

// LimitCaps leaves exactly keep in the permitted and effective sets of every
// thread, clears the inheritable and ambient sets, drops every capability
// from the bounding set and sets SECBIT_NOROOT, SECBIT_NO_CAP_AMBIENT_RAISE
// and their _LOCKED bits, so that a later execve — even as uid 0, even of a
// setuid or file-capability binary — yields CapEff 0. Order matters: the
// bounding set and securebits need CAP_SETPCAP, so they go first.
func LimitCaps(keep []Cap) error { panic("helper: implement") }

// RestrictFS applies r with Landlock (best available ABI, at least 1) to every
// thread. It also scopes abstract unix sockets where the ABI allows (6+).
func RestrictFS(r FSRules) error { panic("helper: implement") }

// LoadSeccomp installs the deny-list filter on every thread (TSYNC).
// no_new_privs must already be set. See seccomp_linux.go for the list.
// clone3 is allowed (its flags live in memory a filter cannot read; Go needs
// it for CLONE_INTO_CGROUP); nested user namespaces are refused instead by
// the guest setting user.max_user_namespaces=0 inside the sandbox's own user
// namespace, which covers clone3 too.
func LoadSeccomp() error { panic("helper: implement") }
