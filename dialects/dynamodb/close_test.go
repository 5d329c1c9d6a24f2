package dynamodb_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/internal/tcpproxy"
)

// Close ends the live leases (lost) and closes the client's connections,
// so a process that opens and closes backends keeps none open.
func TestCloseEndsLeasesAndConnections(t *testing.T) {
	live := liveDSN(t)
	_, query, _ := strings.Cut(live, "?")
	v, _ := url.ParseQuery(query)
	e, err := url.Parse(v.Get("endpoint"))
	if err != nil || e.Host == "" {
		t.Fatalf("the live DSN has no endpoint to put a proxy in front of")
	}
	p, err := tcpproxy.Start(e.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	b := open(t, strings.Replace(live, e.Host, p.Addr(), 1))
	l := nativeTable(t, openLive(t), "_close")
	bl, err := b.LeaseLocker(dialects.Table{Name: l.Schema().Table})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	lease, err := bl.Acquire(ctx, "job", dialects.Options{AtMost: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if p.Conns() == 0 {
		t.Fatal("no connection through the proxy after a request")
	}
	closedAt := time.Now()
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-lease.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the lease did not end with Close")
	}
	if !errors.Is(lease.Err(), dialects.ErrLeaseLost) {
		t.Errorf("lease error after Close: %v", lease.Err())
	}
	// Within 3s: a server drops an idle connection on its own after some
	// seconds (Node's keep-alive timeout, dynalite's, is 5s), which must
	// not pass for Close's doing.
	deadline := time.Now().Add(3 * time.Second)
	for p.Conns() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d connections still open after Close", p.Conns())
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("connections closed %s after Close", time.Since(closedAt).Round(time.Millisecond))
}

// Leases that expire unreleased are not kept for ever: a process that
// takes many and lets them run out (a job that dies without a release)
// holds on to a bounded number.
func TestExpiredLeasesSwept(t *testing.T) {
	db := openLive(t)
	l := nativeTable(t, db, "_sweep")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for i := range 200 {
		if _, err := l.Acquire(ctx, fmt.Sprintf("job-%d", i), dialects.Options{AtMost: 50 * time.Millisecond}); err != nil {
			t.Fatal(err)
		}
		if i%50 == 49 {
			time.Sleep(100 * time.Millisecond) // the 50 just taken run out
		}
	}
	if n := db.Tracked(); n > 150 {
		t.Fatalf("%d leases kept after 200 acquires whose leases ran out", n)
	}
}
