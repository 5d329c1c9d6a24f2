package tcpproxy

import (
	"bufio"
	"io"
	"net"
	"testing"
	"time"
)

// echoServer answers every line with the same line.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { _, _ = io.Copy(c, c); _ = c.Close() }()
		}
	}()
	return ln.Addr().String()
}

func startProxy(t *testing.T) *Proxy {
	t.Helper()
	p, err := Start(echoServer(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// roundTrip sends a line and reads it back within timeout.
func roundTrip(c net.Conn, r *bufio.Reader, timeout time.Duration) (string, error) {
	_ = c.SetDeadline(time.Now().Add(timeout))
	if _, err := c.Write([]byte("ping\n")); err != nil {
		return "", err
	}
	return r.ReadString('\n')
}

func dial(t *testing.T, p *Proxy) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c, bufio.NewReader(c)
}

func TestForwards(t *testing.T) {
	p := startProxy(t)
	c, r := dial(t, p)
	if got, err := roundTrip(c, r, 2*time.Second); err != nil || got != "ping\n" {
		t.Fatalf("round trip: %q, %v", got, err)
	}
	if p.Conns() != 1 {
		t.Fatalf("Conns = %d, want 1", p.Conns())
	}
}

func TestCutClosesAndRefuses(t *testing.T) {
	p := startProxy(t)
	c, r := dial(t, p)
	if _, err := roundTrip(c, r, 2*time.Second); err != nil {
		t.Fatal(err)
	}
	p.Cut()
	if got, err := roundTrip(c, r, 2*time.Second); err == nil {
		t.Fatalf("connection still answers after Cut: %q", got)
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("connection hangs after Cut instead of closing: %v", err)
	}
	c2, r2 := dial(t, p)
	if got, err := roundTrip(c2, r2, 2*time.Second); err == nil {
		t.Fatalf("new connection answered during Cut: %q", got)
	}
	p.Restore()
	c3, r3 := dial(t, p)
	if got, err := roundTrip(c3, r3, 2*time.Second); err != nil || got != "ping\n" {
		t.Fatalf("after Restore: %q, %v", got, err)
	}
}

func TestStallHoldsThenResumes(t *testing.T) {
	p := startProxy(t)
	c, r := dial(t, p)
	if _, err := roundTrip(c, r, 2*time.Second); err != nil {
		t.Fatal(err)
	}
	p.Stall()
	_, err := roundTrip(c, r, 300*time.Millisecond)
	if ne, ok := err.(net.Error); !ok || !ne.Timeout() {
		t.Fatalf("stalled connection: got %v, want a timeout", err)
	}
	p.Restore()
	// The stalled ping comes through, then a new one.
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	if got, err := r.ReadString('\n'); err != nil || got != "ping\n" {
		t.Fatalf("after Restore: %q, %v", got, err)
	}
	if got, err := roundTrip(c, r, 2*time.Second); err != nil || got != "ping\n" {
		t.Fatalf("after Restore: %q, %v", got, err)
	}
}

func TestCutEndsStall(t *testing.T) {
	p := startProxy(t)
	c, r := dial(t, p)
	p.Stall()
	if _, err := roundTrip(c, r, 200*time.Millisecond); err == nil {
		t.Fatal("stalled connection answered")
	}
	p.Cut()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := r.ReadString('\n'); err == nil {
		t.Fatal("connection answered after Cut")
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("connection hangs after Cut: %v", err)
	}
	done := make(chan struct{})
	go func() { _ = p.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		t.Fatal("Close hangs")
	}
}

// A delayed proxy forwards every chunk late, in both directions, and
// still forwards all of it in order.
func TestDelayHoldsEveryChunk(t *testing.T) {
	p := startProxy(t)
	c, r := dial(t, p)
	const d = 300 * time.Millisecond
	p.Delay(d)
	start := time.Now()
	if got, err := roundTrip(c, r, 10*time.Second); err != nil || got != "ping\n" {
		t.Fatalf("delayed round trip: %q, %v", got, err)
	}
	if took := time.Since(start); took < 2*d-50*time.Millisecond {
		t.Fatalf("a round trip took %s through a proxy delaying each chunk by %s", took, d)
	}
	p.Delay(0)
	if got, err := roundTrip(c, r, 10*time.Second); err != nil || got != "ping\n" {
		t.Fatalf("round trip after the delay ended: %q, %v", got, err)
	}
}
