package mysql

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/schedlock/schedlock/dialects"
)

// openSessionLocker opens the live server on database (created for the
// test when create is set, dropped at its end) and returns its session
// locker.
func openSessionLocker(t *testing.T, database string, create bool) dialects.Locker {
	t.Helper()
	if create {
		admin := openLive(t, nil)
		if _, err := admin.ExecContext(testContext(t), "CREATE DATABASE `"+database+"`"); err != nil {
			t.Fatalf("cannot create a second database on the live server: %v", err)
		}
		t.Cleanup(func() { _, _ = admin.ExecContext(context.Background(), "DROP DATABASE IF EXISTS `"+database+"`") })
	}
	db := openLive(t, func(c *mysql.Config) { c.DBName = database })
	d, err := New(testContext(t), db, nil)
	if err != nil {
		t.Fatalf("detect on %s: %v", database, err)
	}
	if got := d.Database; got != database {
		t.Fatalf("detection recorded database %q, want %q", got, database)
	}
	l, err := d.Locker(dialects.StrategySession, dialects.Table{})
	if err != nil {
		t.Fatalf("no session locks on this server: %v", err)
	}
	return l
}

// TestSessionLocksAreScopedToTheDatabase: on one server, the same name in
// two databases is two locks (both acquire), while within one database it
// stays one lock; and a job called like Atlas's lock is not blocked by
// Atlas holding GET_LOCK('atlas_migrate_execute').
func TestSessionLocksAreScopedToTheDatabase(t *testing.T) {
	ctx := testContext(t)
	first := liveConfig(t).DBName
	if first == "" {
		t.Fatalf("%s names no database: the scoping test needs one (mysql://user@host:3306/DB)", dsnEnv)
	}
	a := openSessionLocker(t, first, false)
	b := openSessionLocker(t, uniqueName("sl_scope_"), true)

	name := uniqueName("nightly-")
	opts := dialects.Options{AtMost: time.Minute}
	inA, err := a.Acquire(ctx, name, opts)
	if err != nil {
		t.Fatalf("acquire %s in %s: %v", name, first, err)
	}
	defer inA.Release(ctx)
	inB, err := b.Acquire(ctx, name, opts)
	if err != nil {
		t.Fatalf("acquire %s in the second database while the first holds it: %v (one server-wide lock)", name, err)
	}
	defer inB.Release(ctx)
	other := openSessionLocker(t, first, false)
	if again, err := other.Acquire(ctx, name, opts); !errors.Is(err, dialects.ErrHeld) {
		if again != nil {
			_ = again.Release(ctx)
		}
		t.Errorf("a second acquire of %s in %s: %v, want ErrHeld", name, first, err)
	}

	// Atlas holds its migration lock on another connection.
	c := conn(t, openLive(t, nil))
	var got int
	if err := c.QueryRowContext(ctx, "SELECT GET_LOCK('atlas_migrate_execute', 0)").Scan(&got); err != nil || got != 1 {
		t.Fatalf("atlas_migrate_execute is taken on this server: %v %v", got, err)
	}
	defer c.ExecContext(context.Background(), "DO RELEASE_LOCK('atlas_migrate_execute')")
	job, err := a.Acquire(ctx, "atlas_migrate_execute", opts)
	if err != nil {
		t.Fatalf("a job called atlas_migrate_execute is blocked by Atlas's lock: %v", err)
	}
	_ = job.Release(ctx)
}
