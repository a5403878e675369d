package audit

import "time"

// DiskStats receives the free space of the audit volume, every
// diskCheckInterval. A Stats that also implements it gets it (metrics:
// a gauge, and the alarm).
type DiskStats interface {
	// AuditDisk is the volume's free and total bytes, and whether free
	// space is below the low-disk alarm (Options.MinFreeBytes).
	AuditDisk(free, total uint64, low bool)
}

// diskCheckInterval is how often the audit volume's space is looked at.
const diskCheckInterval = 10 * time.Second

// diskState is the low-disk alarm's state (the background goroutine's).
type diskState struct {
	low      bool
	lastWarn time.Time
}

// checkDisk looks at the audit volume's free space. Below MinFreeBytes it
// warns (again every five minutes while it lasts) and reports it, so that
// an operator hears of it before a full disk makes the log refuse every
// audited action (fail closed): a disk-exhaustion alarm, issue 14 item 12.
func (l *Log) checkDisk() {
	free, total, err := volumeSpace(l.dir)
	if err != nil {
		return
	}
	low := l.o.MinFreeBytes > 0 && free < uint64(l.o.MinFreeBytes)
	if ds, ok := l.o.Stats.(DiskStats); ok {
		ds.AuditDisk(free, total, low)
	}
	switch {
	case low && (!l.disk.low || time.Since(l.disk.lastWarn) >= 5*time.Minute):
		l.disk.lastWarn = time.Now()
		l.log.Warn("audit volume is nearly full: when it is full every audited action is refused; free space, or set retention (--audit-max-bytes, --audit-max-age)",
			"free_bytes", free, "total_bytes", total, "alarm_below_bytes", l.o.MinFreeBytes)
	case !low && l.disk.low:
		l.log.Info("audit volume has space again", "free_bytes", free)
	}
	l.disk.low = low
}
