//go:build linux && !(mips || mipsle || mips64 || mips64le || ppc || ppc64 || ppc64le || sparc64)

package disk

// The generic <asm-generic/ioctl.h> encoding: 2 direction bits at 30, a
// 14-bit size at 16.
const (
	iocWrite     = 1
	iocRead      = 2
	iocDirShift  = 30
	iocSizeShift = 16
)
