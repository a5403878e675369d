//go:build linux && (mips || mipsle || mips64 || mips64le || ppc || ppc64 || ppc64le || sparc64)

package disk

// MIPS, PowerPC and SPARC encode ioctls with 3 direction bits at 29 and a
// 13-bit size at 16.
const (
	iocWrite     = 4
	iocRead      = 2
	iocDirShift  = 29
	iocSizeShift = 16
)
