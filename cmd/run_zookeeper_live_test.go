//go:build unix

package cmd

import (
	"context"
	"errors"
	"net/url"
	"path/filepath"
	"testing"
	"time"

	"github.com/schedlock/schedlock/checks"
	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/zookeeper"
	"github.com/schedlock/schedlock/internal/livetest"
	"github.com/schedlock/schedlock/internal/tcpproxy"
)

// ZooKeeper losing the holder's connection while `run` holds a lock: the
// connection cut by the proxy (the client sees it at once), or stalled
// (packets vanish; the client notices by its read timeout, and the server
// expires the session). Either way run stops the command and exits 113
// before another client can take the lock, which it can only once the
// server has expired the holder's session.
func TestRunZooKeeperConnectionLost(t *testing.T) {
	raw := livetest.DSN(t, livetest.ZooKeeper)
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatalf("SCHEDLOCK_TEST_ZK_DSN: %v", err)
	}
	for _, fault := range []string{"cut", "stall"} {
		t.Run(fault, func(t *testing.T) {
			t.Parallel()
			p, err := tcpproxy.Start(u.Host)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = p.Close() })
			t.Cleanup(p.Restore)
			table := checks.NewPrefix()
			via := *u
			via.Host = p.Addr()
			via.RawQuery = "session_timeout=4s"

			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			other, err := zookeeper.Open(ctx, raw)
			if err != nil {
				t.Fatalf("open: %v", err)
			}
			t.Cleanup(func() { _ = other.Close() }) // after the table's drop below
			tl, err := other.LeaseLocker(dialects.Table{Name: table})
			if err != nil {
				t.Fatal(err)
			}
			if err := tl.(dialects.TableCreator).CreateTable(ctx); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = tl.(dialects.TableDropper).DropTable(context.Background()) })

			started := filepath.Join(t.TempDir(), "started")
			done := runInBackground(t, "run", "--dsn", via.String(), "--name", "faulty/job", "--table", table,
				"--at-most", "1m", "--kill-grace", "1s", "--", "sh", "-c", "touch "+started+"; exec sleep 60")
			waitForFile(t, started)
			if _, err := tl.Acquire(ctx, "faulty/job", dialects.Options{Owner: "other"}); !errors.Is(err, dialects.ErrHeld) {
				t.Fatalf("acquire while run holds: %v, want ErrHeld", err)
			}
			switch fault {
			case "cut":
				p.Cut()
			case "stall":
				p.Stall()
			}
			taken := make(chan time.Time, 1)
			go func() {
				for ctx.Err() == nil {
					lease, err := tl.Acquire(ctx, "faulty/job", dialects.Options{Owner: "other", AtMost: time.Minute})
					if err == nil {
						taken <- time.Now()
						_ = lease.Release(context.Background())
						return
					}
					time.Sleep(50 * time.Millisecond)
				}
			}()
			faulted := time.Now()
			r := awaitRun(t, done)
			stopped := time.Now()
			if r.code != CodeLeaseLost {
				t.Fatalf("exit %d (%v), want %d", r.code, r.err, CodeLeaseLost)
			}
			select {
			case at := <-taken:
				if at.Before(stopped) {
					t.Fatalf("another client held the lock at %s, before run had stopped its command at %s", at.Format(time.StampMilli), stopped.Format(time.StampMilli))
				}
				t.Logf("run stopped its command %s after the %s; another client got the lock %s after that (%v)", stopped.Sub(faulted).Round(time.Millisecond), fault, at.Sub(stopped).Round(time.Millisecond), r.err)
			case <-ctx.Done():
				t.Fatal("no other client got the lock after the holder's session was lost")
			}
		})
	}
}
