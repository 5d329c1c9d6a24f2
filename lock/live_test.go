package lock

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// liveDSNs are the databases the tests run on: SQLite always, PostgreSQL
// and MariaDB/MySQL when their test DSNs are set.
func liveDSNs(t *testing.T) map[string]string {
	dsns := map[string]string{"sqlite": filepath.Join(t.TempDir(), "locks.db") + "?x-create-file=true"}
	for name, env := range map[string]string{"postgres": "SCHEDLOCK_TEST_POSTGRES_DSN", "mysql": "SCHEDLOCK_TEST_MYSQL_DSN"} {
		if v := os.Getenv(env); v != "" {
			dsns[name] = v
		} else {
			t.Logf("%s not set: no %s run", env, name)
		}
	}
	return dsns
}

// withOption adds an x- option to a DSN of any form.
func withOption(dsn, option string) string {
	if strings.Contains(dsn[strings.LastIndexByte(dsn, '/')+1:], "?") {
		return dsn + "&" + option
	}
	return dsn + "?" + option
}

func openT(t *testing.T, dsn string) *DB {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	db, err := Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// TestCloseReleasesHeldLeases: a lease still held when its handle closes
// is released by Close, which a second handle proves by taking the lock;
// a second Close is safe and returns the same result; nothing can be
// acquired on a closed handle.
func TestCloseReleasesHeldLeases(t *testing.T) {
	for backend, raw := range liveDSNs(t) {
		for _, strategy := range []Strategy{StrategySession, StrategyTable} {
			if backend == "sqlite" && strategy == StrategySession {
				continue
			}
			t.Run(backend+"/"+string(strategy), func(t *testing.T) {
				ctx := t.Context()
				dsn := withOption(raw, "x-strategy="+string(strategy))
				if strategy == StrategyTable {
					dsn = withOption(dsn, "x-table=lock_test_"+strings.ReplaceAll(NewOwner()[len(NewOwner())-8:], "-", "_"))
				}
				a, b := openT(t, dsn), openT(t, dsn)
				if a.Strategy() != strategy || a.Info().Dialect != backend {
					t.Fatalf("opened %s with %s; want %s with %s", a.Info().Dialect, a.Strategy(), backend, strategy)
				}
				if err := a.CreateTable(ctx); err != nil {
					t.Fatal(err)
				}
				if tl, ok := a.locker.(dialects.LeaseLocker); ok {
					t.Cleanup(func() {
						if d, ok := tl.(dialects.TableDropper); ok {
							_ = d.DropTable(context.Background())
						}
					})
				}
				name := "close-" + NewOwner()
				lease, err := a.Acquire(ctx, name, Options{AtMost: time.Hour})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := b.Acquire(ctx, name, Options{}); !errors.Is(err, ErrHeld) {
					t.Fatalf("second handle acquired a held lock: %v", err)
				}
				if err := a.Close(); err != nil {
					t.Fatalf("Close with a lease held: %v", err)
				}
				select {
				case <-lease.Done():
				default:
					t.Error("the lease's Done is open after Close released it")
				}
				taken, err := b.Acquire(ctx, name, Options{Wait: 10 * time.Second})
				if err != nil {
					t.Fatalf("second handle after Close: %v; want the lock Close released", err)
				}
				if err := taken.Release(ctx); err != nil {
					t.Fatal(err)
				}
				if err := a.Close(); err != nil {
					t.Errorf("second Close: %v", err)
				}
				if _, err := a.Acquire(ctx, name, Options{}); !errors.Is(err, ErrInvalid) {
					t.Errorf("Acquire on a closed handle: %v; want ErrInvalid", err)
				}
			})
		}
	}
}

// strategyDSNs are liveDSNs by "backend/strategy": the table strategy on
// a fresh table everywhere, and the session strategy as Open picks it by
// default (no x-strategy) on PostgreSQL and MariaDB/MySQL.
func strategyDSNs(t *testing.T) map[string]string {
	out := map[string]string{}
	for backend, raw := range liveDSNs(t) {
		out[backend+"/table"] = withOption(withOption(raw, "x-strategy=table"),
			"x-table=withlock_test_"+strings.ReplaceAll(NewOwner()[len(NewOwner())-8:], "-", "_"))
		if backend != "sqlite" {
			out[backend+"/session"] = raw
		}
	}
	return out
}

// openStrategy opens dsn of strategyDSNs[name], checks its strategy and
// creates its table (dropped at the end).
func openStrategy(t *testing.T, name, dsn string) *DB {
	t.Helper()
	db := openT(t, dsn)
	if want := Strategy(name[strings.IndexByte(name, '/')+1:]); db.Strategy() != want {
		t.Fatalf("opened with %s, want %s", db.Strategy(), want)
	}
	if err := db.CreateTable(t.Context()); err != nil {
		t.Fatal(err)
	}
	if tl, ok := db.locker.(dialects.LeaseLocker); ok {
		t.Cleanup(func() {
			if d, ok := tl.(dialects.TableDropper); ok {
				_ = d.DropTable(context.Background())
			}
		})
	}
	return db
}

// TestWithLockLive runs a quick job under WithLock with AtLeast on every
// live backend and strategy: WithLock returns after the job, another
// handle is refused the lock right after, and takes it once AtLeast has
// passed since the acquire (a session lock is kept by the first handle's
// process meanwhile, a table lease by the database).
func TestWithLockLive(t *testing.T) {
	const atLeast = time.Second
	for name, dsn := range strategyDSNs(t) {
		t.Run(name, func(t *testing.T) {
			a := openStrategy(t, name, dsn)
			b := openT(t, dsn)
			lockName := "withlock-" + NewOwner()
			ran := false
			before := time.Now()
			err := WithLock(t.Context(), a, lockName, Options{AtMost: time.Minute, AtLeast: atLeast}, func(context.Context, Lease) error { ran = true; return nil })
			if err != nil || !ran {
				t.Fatalf("WithLock = %v, ran %v", err, ran)
			}
			if _, err := b.Acquire(t.Context(), lockName, Options{}); !errors.Is(err, ErrHeld) {
				t.Fatalf("another handle right after WithLock: %v, want ErrHeld (AtLeast %s)", err, atLeast)
			}
			deadline := time.Now().Add(20 * atLeast)
			for {
				l, err := b.Acquire(t.Context(), lockName, Options{})
				if err == nil {
					// The table's times have millisecond precision.
					if took := time.Since(before); took < atLeast-10*time.Millisecond {
						t.Errorf("another handle took the lock %s after the acquire, before AtLeast %s", took, atLeast)
					}
					_ = l.Release(t.Context())
					return
				}
				if !errors.Is(err, ErrHeld) || time.Now().After(deadline) {
					t.Fatalf("another handle after AtLeast: %v", err)
				}
				time.Sleep(50 * time.Millisecond)
			}
		})
	}
}

// TestCloseFreesSessionHold: a session lock kept for its AtLeast after
// WithLock returned is freed at once by Close (as by the process's exit:
// the server frees a session's locks with it), and Close leaves none of
// the handle's goroutines behind.
func TestCloseFreesSessionHold(t *testing.T) {
	for name, dsn := range strategyDSNs(t) {
		if !strings.HasSuffix(name, "/session") {
			continue
		}
		t.Run(name, func(t *testing.T) {
			b := openT(t, dsn)
			baseline := runtime.NumGoroutine()
			a := openStrategy(t, name, dsn)
			lockName := "close-hold-" + NewOwner()
			if err := WithLock(t.Context(), a, lockName, Options{AtMost: time.Hour, AtLeast: time.Hour}, func(context.Context, Lease) error { return nil }); err != nil {
				t.Fatal(err)
			}
			if _, err := b.Acquire(t.Context(), lockName, Options{}); !errors.Is(err, ErrHeld) {
				t.Fatalf("another handle during the hold: %v, want ErrHeld", err)
			}
			if err := a.Close(); err != nil {
				t.Fatal(err)
			}
			l, err := b.Acquire(t.Context(), lockName, Options{Wait: 10 * time.Second})
			if err != nil {
				t.Fatalf("another handle after Close: %v, want the lock Close freed", err)
			}
			if err := l.Release(t.Context()); err != nil {
				t.Fatal(err)
			}
			if err := b.Close(); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(10 * time.Second)
			for runtime.NumGoroutine() > baseline {
				if time.Now().After(deadline) {
					buf := make([]byte, 1<<20)
					t.Fatalf("%d goroutines after Close, %d before Open:\n%s", runtime.NumGoroutine(), baseline, buf[:runtime.Stack(buf, true)])
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
}

// TestOpenRefusesMissingFile: a SQLite path that does not exist is refused
// as the schedlock command refuses it, and no file is left behind; with
// x-create-file=true the file is created and locks.
func TestOpenRefusesMissingFile(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "lcoks.db")
	db, err := Open(ctx, path)
	if err == nil {
		db.Close()
		t.Fatal("Open of a missing file succeeded")
	}
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "x-create-file=true") {
		t.Errorf("error %q: want fs.ErrNotExist and the option that creates the file", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the refused Open left %s behind: %v", path, err)
	}
	db = openT(t, path+"?x-create-file=true")
	if err := db.CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	lease, err := db.Acquire(ctx, "job", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := lease.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("x-create-file=true did not create %s: %v", path, err)
	}
	// Once it exists, the file opens without the option.
	openT(t, path)
}

// TestOpenBadDSN: every DSN that cannot be opened fails at Open with one
// line that names the backend (or the DSN's problem) and what to do, and
// never shows the password.
func TestOpenBadDSN(t *testing.T) {
	const secret = "s3cr3t-pw"
	missingDir := filepath.Join(t.TempDir(), "no", "such", "locks.db")
	cases := []struct {
		dsn  string
		want []string
		is   error
	}{
		{"", []string{"invalid DSN", "empty"}, ErrInvalid},
		{"nosuch://app:" + secret + "@h/db", []string{`unknown scheme "nosuch"`, "postgres://"}, ErrInvalid},
		{"postgres://app:" + secret + "@127.0.0.1:1/jobs?connect_timeout=5", []string{"cannot connect to postgres at 127.0.0.1:1", "is the server running?"}, nil},
		{"mysql://app:" + secret + "@127.0.0.1:1/jobs?timeout=5s", []string{"cannot connect to mysql at 127.0.0.1:1", "is the server running?"}, nil},
		{missingDir, []string{"SQLite file " + missingDir + " does not exist", "check the path", "x-create-file=true"}, fs.ErrNotExist},
		{missingDir + "?x-create-file=true", []string{"cannot open sqlite file", "does not exist", "create the directory"}, nil},
		{filepath.Join(t.TempDir(), "s.db") + "?x-strategy=session&x-create-file=true", []string{"sqlite", "session", "use the table strategy (lock.StrategyTable)"}, ErrUnsupported},
		{filepath.Join(t.TempDir(), "s.db") + "?x-create-file=maybe", []string{"x-create-file", `"maybe" is not true or false`}, ErrInvalid},
		{"postgres://h/db?x-strategy=sometimes", []string{"x-strategy", "use session or table"}, ErrInvalid},
	}
	for _, tc := range cases {
		t.Run(tc.dsn, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
			defer cancel()
			db, err := Open(ctx, tc.dsn)
			if err == nil {
				db.Close()
				t.Fatal("Open succeeded")
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") {
				t.Errorf("error spans lines: %q", msg)
			}
			if strings.Contains(msg, secret) {
				t.Errorf("error shows the password: %q", msg)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not say %q", msg, w)
				}
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %q does not match %v", msg, tc.is)
			}
			if strings.Contains(msg, " --") {
				t.Errorf("error %q names a command line flag", msg)
			}
			if errors.Is(err, ErrUnsupported) {
				if r, ok := dialects.RemedyOf(err); !ok || r != dialects.UseTableStrategy {
					t.Errorf("error %q carries remedy %+v (%v), want the table strategy", msg, r, ok)
				}
			}
		})
	}
}
