package disk

import (
	"bytes"
	"encoding/binary"
)

// dirent is one parsed struct linux_dirent64.
type dirent struct {
	Ino  uint64
	Off  int64 // position of the next entry (a cookie for lseek)
	Type uint8 // DT_*
	Name string
}

// direntHeader is the fixed part of linux_dirent64: d_ino u64, d_off s64,
// d_reclen u16, d_type u8; the NUL-terminated name follows.
const direntHeader = 19

// parseDirent decodes the entry at the start of buf (native byte order, as
// getdents64(2) writes it) and returns it with its record length; ok is
// false when buf does not start with a well-formed entry.
func parseDirent(buf []byte) (d dirent, reclen int, ok bool) {
	if len(buf) < direntHeader {
		return d, 0, false
	}
	reclen = int(binary.NativeEndian.Uint16(buf[16:18]))
	if reclen <= direntHeader || reclen > len(buf) {
		return d, 0, false
	}
	name := buf[direntHeader:reclen]
	n := bytes.IndexByte(name, 0)
	if n <= 0 {
		return d, 0, false
	}
	d.Ino = binary.NativeEndian.Uint64(buf[0:8])
	d.Off = int64(binary.NativeEndian.Uint64(buf[8:16]))
	d.Type = buf[18]
	d.Name = string(name[:n])
	return d, reclen, true
}
