//go:build linux

package disk

import (
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// fsxattr mirrors struct fsxattr from <linux/fs.h> (28 bytes), the argument
// of FS_IOC_FSGETXATTR / FS_IOC_FSSETXATTR. golang.org/x/sys has neither.
type fsxattr struct {
	Xflags     uint32 // FS_XFLAG_*
	Extsize    uint32
	Nextents   uint32
	Projid     uint32
	Cowextsize uint32
	Pad        [8]byte
}

func ioc(dir, typ, nr, size uintptr) uintptr {
	return dir<<iocDirShift | size<<iocSizeShift | typ<<8 | nr
}

var (
	// _IOR('X', 31, struct fsxattr) and _IOW('X', 32, struct fsxattr):
	// 0x801c581f / 0x401c5820 with the generic encoding.
	fsIocFsgetxattr = ioc(iocRead, 'X', 31, unsafe.Sizeof(fsxattr{}))
	fsIocFssetxattr = ioc(iocWrite, 'X', 32, unsafe.Sizeof(fsxattr{}))
)

const fsXflagProjinherit = 0x00000200 // FS_XFLAG_PROJINHERIT

func getFsxattr(fd int) (fsxattr, error) {
	var fa fsxattr
	if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), fsIocFsgetxattr, uintptr(unsafe.Pointer(&fa))); e != 0 {
		return fa, fmt.Errorf("FS_IOC_FSGETXATTR: %w", e)
	}
	return fa, nil
}

func setFsxattr(fd int, fa *fsxattr) error {
	if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), fsIocFssetxattr, uintptr(unsafe.Pointer(fa))); e != 0 {
		return fmt.Errorf("FS_IOC_FSSETXATTR: %w", e)
	}
	return nil
}

// fsDiskQuota mirrors struct fs_disk_quota from <linux/dqblk_xfs.h>
// (FS_DQUOT_VERSION 1). Offsets, checked against the C header with
// offsetof() and again in TestQuotaStructLayout, are in the comments; every
// 64-bit field is naturally aligned, so the layout is the same on 32- and
// 64-bit ABIs. Block counts are in 512-byte "basic blocks".
type fsDiskQuota struct {
	Version      int8    // 0   d_version
	Flags        int8    // 1   d_flags: FS_{USER,PROJ,GROUP}_QUOTA
	Fieldmask    uint16  // 2   d_fieldmask: FS_DQ_* for Q_XSETQLIM
	ID           uint32  // 4   d_id
	BlkHardlimit uint64  // 8   d_blk_hardlimit
	BlkSoftlimit uint64  // 16  d_blk_softlimit
	InoHardlimit uint64  // 24  d_ino_hardlimit
	InoSoftlimit uint64  // 32  d_ino_softlimit
	Bcount       uint64  // 40  d_bcount
	Icount       uint64  // 48  d_icount
	Itimer       int32   // 56  d_itimer
	Btimer       int32   // 60  d_btimer
	Iwarns       uint16  // 64  d_iwarns
	Bwarns       uint16  // 66  d_bwarns
	ItimerHi     int8    // 68  d_itimer_hi
	BtimerHi     int8    // 69  d_btimer_hi
	RtbtimerHi   int8    // 70  d_rtbtimer_hi
	_            int8    // 71  d_padding2
	RtbHardlimit uint64  // 72  d_rtb_hardlimit
	RtbSoftlimit uint64  // 80  d_rtb_softlimit
	Rtbcount     uint64  // 88  d_rtbcount
	Rtbtimer     int32   // 96  d_rtbtimer
	Rtbwarns     uint16  // 100 d_rtbwarns
	_            int16   // 102 d_padding3
	_            [8]byte // 104 d_padding4; sizeof == 112
}

const (
	fsDquotVersion = 1      // FS_DQUOT_VERSION
	fsProjQuota    = 1 << 1 // FS_PROJ_QUOTA
	fsDqIsoft      = 1 << 0 // FS_DQ_ISOFT
	fsDqIhard      = 1 << 1 // FS_DQ_IHARD
	fsDqBsoft      = 1 << 2 // FS_DQ_BSOFT
	fsDqBhard      = 1 << 3 // FS_DQ_BHARD

	prjQuota     = 2 // PRJQUOTA from <linux/quota.h>
	qXGetQuota   = 'X'<<8 + 3
	qXSetQLim    = 'X'<<8 + 4
	subCmdShift  = 8
	basicBlock   = 512
	qcmdGetQuota = qXGetQuota<<subCmdShift | prjQuota // QCMD(Q_XGETQUOTA, PRJQUOTA) = 0x580302
	qcmdSetQLim  = qXSetQLim<<subCmdShift | prjQuota  // QCMD(Q_XSETQLIM, PRJQUOTA) = 0x580402
)

// quotaOps is what the XFS store needs from the quota subsystem (an
// interface so tests can run the store on kernels without XFS quotas).
type quotaOps interface {
	setLimits(id uint32, bytes, inodes int64) error
	get(id uint32) (Usage, error)
}

// quotactl issues an XFS project-quota command on the filesystem, through
// quotactl_fd(2) (Linux 5.14+) on an fd of the mount when the kernel has
// it, else through quotactl(2) with the block device's path.
type quotactl struct {
	fd   int    // any fd on the filesystem
	dev  string // block device, for quotactl(2)
	noFd bool   // quotactl_fd returned ENOSYS
}

func (q *quotactl) do(cmd uintptr, id uint32, dq *fsDiskQuota) error {
	if !q.noFd {
		_, _, e := unix.Syscall6(unix.SYS_QUOTACTL_FD, uintptr(q.fd), cmd, uintptr(id), uintptr(unsafe.Pointer(dq)), 0, 0)
		if e != unix.ENOSYS {
			return errnoErr(e)
		}
		q.noFd = true
	}
	dev, err := unix.BytePtrFromString(q.dev)
	if err != nil {
		return err
	}
	_, _, e := unix.Syscall6(unix.SYS_QUOTACTL, cmd, uintptr(unsafe.Pointer(dev)), uintptr(id), uintptr(unsafe.Pointer(dq)), 0, 0)
	if e == unix.ENOSYS {
		return fmt.Errorf("the filesystem has no quota support: %w", e)
	}
	return errnoErr(e)
}

func errnoErr(e unix.Errno) error {
	if e == 0 {
		return nil
	}
	return e
}

// setLimits sets the hard block and inode limits of project id (soft
// limits cleared). Zero limits mean "no limit": that is how a freed project
// is reset.
func (q *quotactl) setLimits(id uint32, bytes, inodes int64) error {
	dq := fsDiskQuota{
		Version:      fsDquotVersion,
		Flags:        fsProjQuota,
		Fieldmask:    fsDqBhard | fsDqBsoft | fsDqIhard | fsDqIsoft,
		ID:           id,
		BlkHardlimit: uint64((bytes + basicBlock - 1) / basicBlock),
		InoHardlimit: uint64(inodes),
	}
	if err := q.do(qcmdSetQLim, id, &dq); err != nil {
		return fmt.Errorf("quotactl(Q_XSETQLIM, project %d): %w", id, err)
	}
	return nil
}

// get reads project id's usage and limits. A project XFS has no record of
// (never limited, nothing charged) reads as all zeros.
func (q *quotactl) get(id uint32) (Usage, error) {
	var dq fsDiskQuota
	if err := q.do(qcmdGetQuota, id, &dq); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return Usage{}, nil
		}
		return Usage{}, fmt.Errorf("quotactl(Q_XGETQUOTA, project %d): %w", id, err)
	}
	return Usage{
		Bytes:       int64(dq.Bcount) * basicBlock,
		Inodes:      int64(dq.Icount),
		BytesLimit:  int64(dq.BlkHardlimit) * basicBlock,
		InodesLimit: int64(dq.InoHardlimit),
	}, nil
}
