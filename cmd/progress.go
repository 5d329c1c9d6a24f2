package cmd

import (
	"fmt"
	"io"
	"sync"

	"github.com/schedlock/schedlock/checks"
	"github.com/schedlock/schedlock/internal/output"
)

// progressLine shows the running check on one terminal line, rewritten in
// place ("[3/42] table.acquire: acquire & release…"), cut to the terminal's
// width so it never wraps, and clears it when done. Used only when stderr
// is a terminal.
type progressLine struct {
	mu    sync.Mutex
	w     io.Writer
	width func() int // the terminal's width, measured at each update; nil: no limit
	n     int
	total int
}

// setTotal is checks.Config.Total.
func (p *progressLine) setTotal(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.total = n
}

// update is checks.Config.Progress.
func (p *progressLine) update(r checks.Result, started bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !started {
		return
	}
	p.n++
	fmt.Fprint(p.w, "\r\x1b[K"+output.Truncate(p.text(r), p.columns()))
}

// text is the line for check r, uncut.
func (p *progressLine) text(r checks.Result) string {
	counter := fmt.Sprintf("[%d]", p.n)
	if p.total >= p.n {
		counter = fmt.Sprintf("[%d/%d]", p.n, p.total)
	}
	return fmt.Sprintf("%s %s: %s…", counter, r.ID, r.Title)
}

// columns is the room on the line: one column less than the terminal, so
// the cursor never wraps to the next line.
func (p *progressLine) columns() int {
	if p.width == nil {
		return 0
	}
	if w := p.width(); w > 1 {
		return w - 1
	}
	return 0
}

func (p *progressLine) clear() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.n > 0 {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}
