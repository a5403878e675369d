package bench

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// progress draws one bar line on a terminal, redrawn at most every 50 ms.
// A nil writer draws nothing.
type progress struct {
	mu          sync.Mutex
	w           io.Writer
	name        string
	total, done int
	last        time.Time
	drawn       bool
}

func newProgress(w io.Writer) *progress { return &progress{w: w} }

const barWidth = 30

func (p *progress) start(name string, total int) {
	if p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.name, p.total, p.done = name, total, 0
	p.draw(true)
}

func (p *progress) step(n int) {
	if p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done += n
	p.draw(p.done >= p.total)
}

func (p *progress) draw(force bool) {
	if !force && time.Since(p.last) < 50*time.Millisecond {
		return
	}
	p.last = time.Now()
	fill := 0
	if p.total > 0 {
		fill = min(barWidth, p.done*barWidth/p.total)
	}
	bar := strings.Repeat("=", fill) + strings.Repeat(" ", barWidth-fill)
	// One short line: a wrapped line would break the \r redraw.
	fmt.Fprintf(p.w, "\r\033[K[%s] %d/%d %s", bar, p.done, p.total, clip(p.name, 40))
	p.drawn = true
}

// clear erases the bar, before the report is printed.
func (p *progress) clear() {
	if p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		fmt.Fprint(p.w, "\r\033[K")
		p.drawn = false
	}
}
