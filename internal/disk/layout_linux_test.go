//go:build linux

package disk

import (
	"runtime"
	"testing"
	"unsafe"
)

// The offsets of struct fs_disk_quota and struct fsxattr as the C headers
// lay them out (measured with offsetof() against <linux/dqblk_xfs.h> and
// <linux/fs.h>).
func TestQuotaStructLayout(t *testing.T) {
	var q fsDiskQuota
	for _, c := range []struct {
		field    string
		got, off uintptr
	}{
		{"d_version", unsafe.Offsetof(q.Version), 0},
		{"d_flags", unsafe.Offsetof(q.Flags), 1},
		{"d_fieldmask", unsafe.Offsetof(q.Fieldmask), 2},
		{"d_id", unsafe.Offsetof(q.ID), 4},
		{"d_blk_hardlimit", unsafe.Offsetof(q.BlkHardlimit), 8},
		{"d_blk_softlimit", unsafe.Offsetof(q.BlkSoftlimit), 16},
		{"d_ino_hardlimit", unsafe.Offsetof(q.InoHardlimit), 24},
		{"d_ino_softlimit", unsafe.Offsetof(q.InoSoftlimit), 32},
		{"d_bcount", unsafe.Offsetof(q.Bcount), 40},
		{"d_icount", unsafe.Offsetof(q.Icount), 48},
		{"d_itimer", unsafe.Offsetof(q.Itimer), 56},
		{"d_btimer", unsafe.Offsetof(q.Btimer), 60},
		{"d_iwarns", unsafe.Offsetof(q.Iwarns), 64},
		{"d_bwarns", unsafe.Offsetof(q.Bwarns), 66},
		{"d_itimer_hi", unsafe.Offsetof(q.ItimerHi), 68},
		{"d_btimer_hi", unsafe.Offsetof(q.BtimerHi), 69},
		{"d_rtbtimer_hi", unsafe.Offsetof(q.RtbtimerHi), 70},
		{"d_rtb_hardlimit", unsafe.Offsetof(q.RtbHardlimit), 72},
		{"d_rtb_softlimit", unsafe.Offsetof(q.RtbSoftlimit), 80},
		{"d_rtbcount", unsafe.Offsetof(q.Rtbcount), 88},
		{"d_rtbtimer", unsafe.Offsetof(q.Rtbtimer), 96},
		{"d_rtbwarns", unsafe.Offsetof(q.Rtbwarns), 100},
	} {
		if c.got != c.off {
			t.Errorf("%s at offset %d, want %d", c.field, c.got, c.off)
		}
	}
	if s := unsafe.Sizeof(q); s != 112 {
		t.Errorf("sizeof(fs_disk_quota) = %d, want 112", s)
	}
	var fa fsxattr
	if s, p := unsafe.Sizeof(fa), unsafe.Offsetof(fa.Projid); s != 28 || p != 12 {
		t.Errorf("fsxattr: size %d, fsx_projid at %d; want 28, 12", s, p)
	}
	if qcmdGetQuota != 0x580302 || qcmdSetQLim != 0x580402 {
		t.Errorf("QCMD values %#x %#x", qcmdGetQuota, qcmdSetQLim)
	}
	switch runtime.GOARCH {
	case "amd64", "arm64", "386", "arm", "riscv64", "loong64", "s390x":
		if fsIocFsgetxattr != 0x801c581f || fsIocFssetxattr != 0x401c5820 {
			t.Errorf("FS_IOC_FSGETXATTR %#x FS_IOC_FSSETXATTR %#x", fsIocFsgetxattr, fsIocFssetxattr)
		}
	}
}
