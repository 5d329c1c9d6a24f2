// Package tcpproxy is a loopback TCP proxy for tests that must lose the
// database in the middle of a lock: it forwards 127.0.0.1:port to a server
// and can cut every connection (the network drops, the server restarts),
// stall them (packets vanish, nothing answers) or delay them (a slow path
// or a slow server) on request.
package tcpproxy

import (
	"fmt"
	"net"
	"sync"
	"time"
)

// Proxy forwards connections accepted on Addr to a target address.
type Proxy struct {
	ln     net.Listener
	target string

	mu      sync.Mutex
	conns   map[net.Conn]struct{} // both sides of every forwarded connection
	cut     bool                  // refuse and close everything
	stalled bool                  // forward nothing, answer nothing
	delay   time.Duration         // how long each chunk is held before it is forwarded
	resume  chan struct{}         // closed when a stall ends
	wg      sync.WaitGroup
}

// Start listens on 127.0.0.1 on a free port and forwards to target
// (host:port).
func Start(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("tcpproxy: listen: %w", err)
	}
	p := &Proxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}, resume: make(chan struct{})}
	close(p.resume)
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is the proxy's host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Port is the proxy's port.
func (p *Proxy) Port() int { return p.ln.Addr().(*net.TCPAddr).Port }

// Cut closes every forwarded connection and, until Restore, closes new ones
// as soon as they are accepted: to the client the server is gone. A Cut
// ends a Stall.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	for c := range p.conns {
		_ = c.Close()
	}
	if p.stalled {
		p.stalled = false
		close(p.resume)
	}
}

// Stall stops forwarding in both directions and, until Restore, holds new
// connections without forwarding them: to the client the server does not
// answer, as when a network path silently drops packets.
func (p *Proxy) Stall() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.stalled {
		p.stalled = true
		p.resume = make(chan struct{})
	}
}

// Restore ends a Cut or a Stall: new connections are forwarded again, and
// stalled ones resume.
func (p *Proxy) Restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = false
	if p.stalled {
		p.stalled = false
		close(p.resume)
	}
}

// Delay holds every chunk read from then on, in both directions, for d
// before forwarding it (0 ends the delay): a request and its answer then
// take 2×d more. Chunks keep their order and are not slowed by each
// other: each is forwarded d after it arrived.
func (p *Proxy) Delay(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.delay = d
}

// Conns is the number of client connections being forwarded.
func (p *Proxy) Conns() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns) / 2
}

// Close stops listening, closes every connection and waits for the
// forwarding goroutines to end.
func (p *Proxy) Close() error {
	err := p.ln.Close()
	p.Cut()
	p.wg.Wait()
	return err
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return // listener closed
		}
		p.wg.Add(1)
		go p.serve(client)
	}
}

// serve forwards one client connection to a new connection to the target.
func (p *Proxy) serve(client net.Conn) {
	defer p.wg.Done()
	if !p.waitForward(client) {
		_ = client.Close()
		return
	}
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		_ = client.Close()
		return
	}
	if !p.track(client, server) {
		return
	}
	var copies sync.WaitGroup
	copies.Add(2)
	go func() { defer copies.Done(); p.copy(server, client) }()
	go func() { defer copies.Done(); p.copy(client, server) }()
	copies.Wait()
	p.untrack(client, server)
}

// waitForward blocks while the proxy is stalled; false when it is cut.
func (p *Proxy) waitForward(client net.Conn) bool {
	for {
		p.mu.Lock()
		cut, resume := p.cut, p.resume
		if !cut && !p.stalled {
			p.mu.Unlock()
			return true
		}
		if !cut {
			// Track the client while it waits, so that Cut closes it.
			p.conns[client] = struct{}{}
		}
		p.mu.Unlock()
		if cut {
			return false
		}
		<-resume
		p.mu.Lock()
		delete(p.conns, client)
		p.mu.Unlock()
	}
}

// track registers a forwarded pair; false (both closed) when a Cut came
// in between.
func (p *Proxy) track(client, server net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cut {
		_ = client.Close()
		_ = server.Close()
		return false
	}
	p.conns[client] = struct{}{}
	p.conns[server] = struct{}{}
	return true
}

func (p *Proxy) untrack(client, server net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.conns, client)
	delete(p.conns, server)
}

// chunk is what one read from a side returned, and when.
type chunk struct {
	data []byte
	at   time.Time
}

// copy moves bytes from src to dst, holding each chunk while the proxy is
// stalled and for the delay after its arrival, and closes both when either
// side ends.
func (p *Proxy) copy(dst, src net.Conn) {
	chunks := make(chan chunk, 16)
	defer func() {
		_ = dst.Close()
		_ = src.Close()
		for range chunks { // let the reader end
		}
	}()
	go func() {
		defer close(chunks)
		for {
			buf := make([]byte, 32*1024)
			n, err := src.Read(buf)
			if n > 0 {
				chunks <- chunk{data: buf[:n], at: time.Now()}
			}
			if err != nil {
				return // EOF, a reset, or a Cut closed the connection
			}
		}
	}()
	for c := range chunks {
		p.mu.Lock()
		resume, delay := p.resume, p.delay
		p.mu.Unlock()
		<-resume
		if wait := time.Until(c.at.Add(delay)); delay > 0 && wait > 0 {
			time.Sleep(wait)
		}
		if _, err := dst.Write(c.data); err != nil {
			return
		}
	}
}
