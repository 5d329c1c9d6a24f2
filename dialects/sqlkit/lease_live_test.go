package sqlkit_test

// Lease-layer behaviour on real databases: SQLite always, PostgreSQL and
// MariaDB/MySQL when SCHEDLOCK_TEST_POSTGRES_DSN / SCHEDLOCK_TEST_MYSQL_DSN
// are set. The networked servers are reached through internal/tcpproxy so
// that a test can cut or stall the path to them.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/mysql"
	"github.com/schedlock/schedlock/dialects/postgres"
	"github.com/schedlock/schedlock/dialects/sqlite"
	"github.com/schedlock/schedlock/dialects/sqlkit"
	"github.com/schedlock/schedlock/internal/tcpproxy"
)

// liveServer is one networked test server reached through a proxy.
type liveServer struct {
	name    string // subtest name
	dialect string
	driver  string
	dsn     string // the server's own DSN
	addr    string // host:port in dsn
	via     func(addr string) string
}

func liveServers(t *testing.T) []liveServer {
	t.Helper()
	var out []liveServer
	if raw := os.Getenv("SCHEDLOCK_TEST_POSTGRES_DSN"); raw != "" {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatalf("SCHEDLOCK_TEST_POSTGRES_DSN: %v", err)
		}
		out = append(out, liveServer{name: "postgres", dialect: postgres.Name, driver: postgres.DriverName, dsn: raw, addr: u.Host,
			via: func(addr string) string { v := *u; v.Host = addr; return v.String() }})
	}
	if raw := os.Getenv("SCHEDLOCK_TEST_MYSQL_DSN"); raw != "" {
		cfg, err := gomysql.ParseDSN(raw)
		if err != nil {
			t.Fatalf("SCHEDLOCK_TEST_MYSQL_DSN: %v", err)
		}
		out = append(out, liveServer{name: "mysql", dialect: mysql.Name, driver: "mysql", dsn: raw, addr: cfg.Addr,
			via: func(addr string) string { c := cfg.Clone(); c.Addr = addr; return c.FormatDSN() }})
	}
	if len(out) == 0 {
		t.Log("no live server DSN set: only SQLite runs")
	}
	return out
}

// openDetected opens dsn with driver and detects it as dialect.
func openDetected(t *testing.T, driver, dsn, dialect string) *sqlkit.DB {
	t.Helper()
	d, ok := dialects.Lookup(dialect)
	if !ok {
		t.Fatalf("no %s dialect linked", dialect)
	}
	b, err := d.Open(testContext(t), dialects.Target{Scheme: dialect, Conn: dsn})
	if err != nil {
		t.Fatalf("open %s: %v", dialect, err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return sqlkit.MustOf(b)
}

// proxied opens s through a fresh proxy.
func proxied(t *testing.T, s liveServer) (*sqlkit.DB, *tcpproxy.Proxy) {
	t.Helper()
	p, err := tcpproxy.Start(s.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	t.Cleanup(p.Restore) // runs first: a stalled proxy must not hold up the other cleanups
	return openDetected(t, s.driver, s.via(p.Addr()), s.dialect), p
}

func openSQLite(t *testing.T) *sqlkit.DB {
	t.Helper()
	return openDetected(t, sqlite.DriverName, sqlite.DSN(filepath.Join(t.TempDir(), "locks.db")), sqlite.Name)
}

// tableLocker returns a locker on a fresh table of db, dropped at the end.
func tableLocker(t *testing.T, db *sqlkit.DB) dialects.TableLocker {
	t.Helper()
	l, err := db.TableLocker(dialects.Table{Name: uniqueName("lease_")})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.CreateTable(testContext(t)); err != nil {
		t.Fatal(err)
	}
	if d, ok := l.(dialects.TableDropper); ok {
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_ = d.DropTable(ctx)
		})
	}
	return l
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func uniqueName(prefix string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// strategyCase is one locker under test.
type strategyCase struct {
	name   string
	locker dialects.Locker
	// lose makes the lease of name really lost while fn runs.
	lose func(t *testing.T, name string)
}

// strategyCases are the table locker on SQLite and, per live server, the
// table and session lockers behind a proxy.
func strategyCases(t *testing.T) []strategyCase {
	t.Helper()
	sq := tableLocker(t, openSQLite(t))
	cases := []strategyCase{{name: "sqlite/table", locker: sq, lose: takeOver(sq)}}
	for _, s := range liveServers(t) {
		db, proxy := proxied(t, s)
		tl := tableLocker(t, db)
		cases = append(cases, strategyCase{name: s.name + "/table", locker: tl, lose: takeOver(tl)})
		sl, err := db.SessionLocker()
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, strategyCase{name: s.name + "/session", locker: sl, lose: func(t *testing.T, _ string) {
			proxy.Cut()
			t.Cleanup(proxy.Restore) // the table's cleanup needs the server again
		}})
	}
	return cases
}

// takeOver ends the lease of name by force and lets another owner take it.
func takeOver(l dialects.TableLocker) func(t *testing.T, name string) {
	return func(t *testing.T, name string) {
		t.Helper()
		exp, ok := l.(interface {
			Expire(ctx context.Context, name string) (bool, error)
		})
		if !ok {
			t.Fatalf("%T cannot expire a lease", l)
		}
		if ended, err := exp.Expire(testContext(t), name); err != nil || !ended {
			t.Fatalf("expire %q: ended=%v err=%v", name, ended, err)
		}
		other, err := l.Acquire(testContext(t), name, dialects.Options{Owner: "other", AtMost: time.Minute})
		if err != nil {
			t.Fatalf("take over %q: %v", name, err)
		}
		t.Cleanup(func() { _ = other.Release(context.Background()) })
	}
}

// A job that releases its own lease, cleanly, makes WithLock report no
// error, and the lock is free at once.
func TestWithLockJobReleasesItselfLive(t *testing.T) {
	for _, c := range strategyCases(t) {
		t.Run(c.name, func(t *testing.T) {
			name := uniqueName("self_")
			err := dialects.WithLock(testContext(t), c.locker, name, dialects.Options{AtMost: 3 * time.Second}, func(ctx context.Context, lease dialects.Lease) error {
				if err := lease.Release(ctx); err != nil {
					return err
				}
				// Past a refresh interval: the keep-alive must not take
				// the release for a loss and cancel the job.
				select {
				case <-ctx.Done():
					t.Errorf("the job's context was cancelled after its own release: %v", context.Cause(ctx))
				case <-time.After(1500 * time.Millisecond):
				}
				return nil
			})
			if err != nil {
				t.Fatalf("WithLock: %v", err)
			}
			again, err := c.locker.Acquire(testContext(t), name, dialects.Options{Owner: "next"})
			if err != nil {
				t.Fatalf("the lock is not free after the job's release: %v", err)
			}
			_ = again.Release(testContext(t))
		})
	}
}

// A lease really lost while the job runs is reported, even when the job
// ignores its context's cause and calls Release itself.
func TestWithLockReportsLossLive(t *testing.T) {
	for _, c := range strategyCases(t) {
		t.Run(c.name, func(t *testing.T) {
			name := uniqueName("lost_")
			err := dialects.WithLock(testContext(t), c.locker, name, dialects.Options{AtMost: 3 * time.Second}, func(ctx context.Context, lease dialects.Lease) error {
				c.lose(t, name)
				select {
				case <-ctx.Done():
					if cause := context.Cause(ctx); !errors.Is(cause, dialects.ErrLeaseLost) {
						t.Errorf("cause = %v, want ErrLeaseLost", cause)
					}
				case <-time.After(15 * time.Second):
					t.Error("the job's context was not cancelled after the loss")
				}
				if err := lease.Release(context.Background()); !errors.Is(err, dialects.ErrLeaseLost) {
					t.Errorf("release of the lost lease: %v, want ErrLeaseLost", err)
				}
				return nil
			})
			if !errors.Is(err, dialects.ErrLeaseLost) {
				t.Fatalf("WithLock = %v, want the loss reported", err)
			}
		})
	}
}

// When the refreshes keep failing, WithLock cancels the job's context
// SafetyMargin before the lease's Until, with a cause matching
// ErrLeaseLost, and the lease itself is still held at that instant.
func TestWithLockStopsBeforeLeaseEndsLive(t *testing.T) {
	type stallCase struct {
		name    string
		locker  dialects.TableLocker
		stall   func(t *testing.T) // makes every refresh fail or hang
		restore func()
	}
	sqDB := openSQLite(t)
	sq := tableLocker(t, sqDB)
	cases := []stallCase{{
		name:   "sqlite/table-renamed",
		locker: sq,
		stall: func(t *testing.T) {
			// The refresh now finds no table: an error that is no loss.
			if _, err := sqDB.SQL.ExecContext(testContext(t), "ALTER TABLE "+sq.Schema().Table+" RENAME TO "+sq.Schema().Table+"_away"); err != nil {
				t.Fatal(err)
			}
		},
		restore: func() {
			_, _ = sqDB.SQL.Exec("ALTER TABLE " + sq.Schema().Table + "_away RENAME TO " + sq.Schema().Table)
		},
	}}
	for _, s := range liveServers(t) {
		db, proxy := proxied(t, s)
		cases = append(cases, stallCase{name: s.name + "/table-stalled", locker: tableLocker(t, db),
			stall: func(*testing.T) { proxy.Stall() }, restore: proxy.Restore})
	}
	const atMost = 3 * time.Second
	margin := dialects.SafetyMargin(atMost)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var stoppedAt, until time.Time
			var leaseErr error
			err := dialects.WithLock(testContext(t), c.locker, uniqueName("margin_"), dialects.Options{AtMost: atMost}, func(ctx context.Context, lease dialects.Lease) error {
				c.stall(t)
				defer c.restore()
				select {
				case <-ctx.Done():
					stoppedAt = time.Now()
					until = lease.Until()
					leaseErr = lease.Err()
					if cause := context.Cause(ctx); !errors.Is(cause, dialects.ErrLeaseLost) {
						t.Errorf("cause = %v, want ErrLeaseLost", cause)
					}
				case <-time.After(10 * atMost):
					t.Error("the job was not stopped")
				}
				return nil
			})
			if !errors.Is(err, dialects.ErrLeaseLost) {
				t.Fatalf("WithLock = %v, want the early stop reported as ErrLeaseLost", err)
			}
			t.Logf("stopped %s before the lease's end (margin %s)", until.Sub(stoppedAt), margin)
			if !stoppedAt.Before(until) {
				t.Fatalf("stopped at %s, not before the lease's end %s", stoppedAt.Format(time.StampMilli), until.Format(time.StampMilli))
			}
			if stoppedAt.Before(until.Add(-margin)) {
				t.Fatalf("stopped at %s, earlier than %s before the end %s", stoppedAt.Format(time.StampMilli), margin, until.Format(time.StampMilli))
			}
			if leaseErr != nil {
				t.Fatalf("the lease had already ended when the job was stopped: %v", leaseErr)
			}
		})
	}
}

// A table lease's Err, Until and Done answer at once while a Refresh hangs
// on a database that stopped answering, and the lease still ends at its
// Until although that Refresh has not returned.
func TestTableLeaseErrDoesNotWaitForRefreshLive(t *testing.T) {
	servers := liveServers(t)
	if len(servers) == 0 {
		t.Skip("needs a live server behind the proxy")
	}
	for _, s := range servers {
		t.Run(s.name, func(t *testing.T) {
			db, proxy := proxied(t, s)
			l := tableLocker(t, db)
			t.Cleanup(proxy.Restore) // runs before the table's cleanup
			lease, err := l.Acquire(testContext(t), uniqueName("stall_"), dialects.Options{AtMost: 2 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			proxy.Stall()
			refreshed := make(chan error, 1)
			go func() { refreshed <- lease.Refresh(testContext(t)) }()
			time.Sleep(300 * time.Millisecond)
			select {
			case err := <-refreshed:
				t.Fatalf("Refresh returned %v through a stalled proxy", err)
			default:
			}

			answered := make(chan time.Duration, 1)
			go func() {
				start := time.Now()
				_ = lease.Err()
				_ = lease.Until()
				select {
				case <-lease.Done():
				default:
				}
				answered <- time.Since(start)
			}()
			select {
			case d := <-answered:
				t.Logf("Err, Until and Done answered in %s with a Refresh in flight", d)
			case <-time.After(time.Second):
				t.Fatal("Err/Until/Done blocked behind the Refresh in flight")
			}

			select {
			case <-lease.Done():
			case <-time.After(10 * time.Second):
				t.Fatal("the lease did not end at its Until while the Refresh hung")
			}
			if !errors.Is(lease.Err(), dialects.ErrLeaseLost) {
				t.Fatalf("Err = %v, want ErrLeaseLost", lease.Err())
			}
			select {
			case err := <-refreshed:
				t.Fatalf("Refresh returned %v before the proxy was restored: the test saw no Refresh in flight", err)
			default:
			}
			proxy.Restore()
			select {
			case err := <-refreshed:
				if err == nil {
					t.Fatal("Refresh of a lease that ended meanwhile succeeded")
				}
			case <-time.After(30 * time.Second):
				t.Fatal("Refresh did not return after the proxy was restored")
			}
		})
	}
}

// An acquire whose context ends while its statement is on the wire (the
// proxy holds it) still learns the statement's outcome: the row it took
// is released again and the acquire fails with the context's error.
// Cut off in flight, the statement would commit when the proxy lets it
// through, and the lock would stay taken for at-most (10 minutes here).
func TestTableAcquireEndedInFlightLeavesNoLock(t *testing.T) {
	for _, s := range liveServers(t) {
		t.Run(s.name, func(t *testing.T) {
			ctx := testContext(t)
			via, proxy := proxied(t, s)
			direct := openDetected(t, s.driver, s.dsn, s.dialect)
			table := dialects.Table{Name: uniqueName("inflight_")}
			dl, err := direct.TableLocker(table)
			if err != nil {
				t.Fatal(err)
			}
			if err := dl.CreateTable(ctx); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = dl.(dialects.TableDropper).DropTable(context.Background()) })
			l, err := via.TableLocker(table)
			if err != nil {
				t.Fatal(err)
			}
			// The statements are prepared and a connection open before
			// the proxy stalls.
			warm, err := l.Acquire(ctx, "report", dialects.Options{Owner: "warm-up"})
			if err != nil {
				t.Fatal(err)
			}
			if err := warm.Release(ctx); err != nil {
				t.Fatal(err)
			}
			proxy.Stall()
			restored := make(chan struct{})
			time.AfterFunc(time.Second, func() { proxy.Restore(); close(restored) })
			actx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
			defer cancel()
			lease, err := l.Acquire(actx, "report", dialects.Options{AtMost: 10 * time.Minute, AtLeast: 5 * time.Minute, Owner: "in-flight"})
			if err == nil {
				t.Fatalf("acquire succeeded after its context ended (until %s)", lease.Until())
			}
			if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "released again") {
				t.Errorf("acquire: %v; want the context's error, the lock released again", err)
			}
			<-restored
			time.Sleep(200 * time.Millisecond) // a statement cut off would land now
			other, err := dl.Acquire(ctx, "report", dialects.Options{AtMost: time.Minute, Owner: "next"})
			if err != nil {
				t.Fatalf("the lock is still taken after the abandoned acquire: %v", err)
			}
			_ = other.Release(ctx)
		})
	}
}
