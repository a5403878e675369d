package native

import (
	"strings"
	"time"
)

// phases times the steps of a create, for the debug log.
type phases struct {
	last time.Time
	b    strings.Builder
}

func newPhases() *phases { return &phases{last: time.Now()} }

func (p *phases) mark(name string) {
	if p == nil {
		return
	}
	now := time.Now()
	if p.b.Len() > 0 {
		p.b.WriteByte(' ')
	}
	p.b.WriteString(name + "=" + now.Sub(p.last).Round(time.Microsecond).String())
	p.last = now
}

func (p *phases) String() string {
	if p == nil {
		return ""
	}
	return p.b.String()
}

// note adds text reported by someone else (the guest's own timings).
func (p *phases) note(s string) {
	if p == nil || s == "" {
		return
	}
	p.b.WriteString(" [" + s + "]")
}
