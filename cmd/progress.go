package cmd

import (
	"fmt"
	"io"
	"sync"

	"github.com/schedlock/schedlock/checks"
)

// progressLine shows the running check on one terminal line, rewritten in
// place, and clears it when done. Used only when stderr is a terminal.
type progressLine struct {
	mu sync.Mutex
	w  io.Writer
	n  int
}

func (p *progressLine) update(r checks.Result, started bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !started {
		return
	}
	p.n++
	fmt.Fprintf(p.w, "\r\x1b[K[%d] %s: %s…", p.n, r.ID, r.Title)
}

func (p *progressLine) clear() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.n > 0 {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}
