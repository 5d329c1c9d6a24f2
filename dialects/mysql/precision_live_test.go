package mysql

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// createPrecisionTable creates a sys_sched_lock table whose times have the
// given column type ("DATETIME" for the published design's DDL) and drops
// it when t ends.
func createPrecisionTable(t *testing.T, db *sql.DB, timeType string) string {
	t.Helper()
	table := uniqueName("ssl_prec_")
	ddl := "CREATE TABLE " + table + " (lock_name VARCHAR(128) NOT NULL PRIMARY KEY, lock_owner VARCHAR(64) NOT NULL, " +
		"acquire_time " + timeType + " NOT NULL, expire_time " + timeType + " NOT NULL) DEFAULT CHARSET=utf8mb4"
	if _, err := db.ExecContext(testContext(t), ddl); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, _ = db.ExecContext(ctx, "DROP TABLE IF EXISTS "+table)
	})
	return table
}

// epochMicros reads expr, a UTC time on the server, as microseconds since
// the epoch.
func epochMicros(t *testing.T, db *sql.DB, query string, args ...any) (int64, int64) {
	t.Helper()
	var a, b int64
	if err := db.QueryRowContext(testContext(t), query, args...).Scan(&a, &b); err != nil {
		t.Fatal(err)
	}
	return a, b
}

func micros(expr string) string {
	return "TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', " + expr + ")"
}

// TestWholeSecondColumnsLive: on the published sys_sched_lock DDL, whose
// times are DATETIME (whole seconds), the Locker reads the precision from
// the catalog and writes expire_time rounded up to the whole second (and
// binds at-least a second longer, as acquire_time lost its fraction), so
// neither the lease nor at-least ends in the database before it ends for
// the holder (the server's own clock, read before the
// acquire, plus at-most or at-least). On DATETIME(3) nothing is rounded.
func TestWholeSecondColumnsLive(t *testing.T) {
	d := openDetected(t)
	db := d.SQL
	ctx := testContext(t)
	type wholer interface{ UntilWholeSeconds() bool }

	t.Run("DATETIME(3) is not rounded", func(t *testing.T) {
		table := createPrecisionTable(t, db, "DATETIME(3)")
		tl, err := d.TableLocker(dialects.Table{Preset: dialects.PresetSysSchedLock, Name: table})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := tl.Inspect(ctx, "job"); err != nil {
			t.Fatal(err)
		}
		if tl.(wholer).UntilWholeSeconds() {
			t.Error("a DATETIME(3) table is taken for whole seconds")
		}
	})

	table := createPrecisionTable(t, db, "DATETIME")
	tl, err := d.TableLocker(dialects.Table{Preset: dialects.PresetSysSchedLock, Name: table})
	if err != nil {
		t.Fatal(err)
	}
	const atMost, atLeast = 30 * time.Second, 5 * time.Second
	var before int64
	if err := db.QueryRowContext(ctx, "SELECT "+micros("UTC_TIMESTAMP(6)")).Scan(&before); err != nil {
		t.Fatal(err)
	}
	lease, err := tl.Acquire(ctx, "job", dialects.Options{AtMost: atMost, AtLeast: atLeast, Owner: "node-a"})
	if err != nil {
		t.Fatal(err)
	}
	if !tl.(wholer).UntilWholeSeconds() {
		t.Fatal("a DATETIME table is not taken for whole seconds")
	}
	row := "SELECT " + micros("acquire_time") + ", " + micros("expire_time") + " FROM " + table + " WHERE lock_name = ?"
	_, until := epochMicros(t, db, row, "job")
	if until < before+atMost.Microseconds() || until%1e6 != 0 {
		t.Errorf("after acquire: expire_time %d µs; want a whole second at or after %d µs (the server's clock before the acquire + at-most %s)",
			until, before+atMost.Microseconds(), atMost)
	}
	if err := lease.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if _, until = epochMicros(t, db, row, "job"); until < before+atMost.Microseconds() {
		t.Errorf("after refresh: expire_time %d µs is before the server's clock before the acquire (%d µs) + %s", until, before, atMost)
	}
	if err := lease.Release(ctx); err != nil {
		t.Fatal(err)
	}
	_, until = epochMicros(t, db, row, "job")
	if until < before+atLeast.Microseconds() || until%1e6 != 0 {
		t.Errorf("after an early release: expire_time %d µs; want a whole second at or after %d µs (the server's clock before the acquire + at-least %s)",
			until, before+atLeast.Microseconds(), atLeast)
	}
	_, err = tl.Acquire(ctx, "job", dialects.Options{AtMost: atMost, Owner: "node-b"})
	if held := (*dialects.HeldError)(nil); !errors.As(err, &held) {
		t.Errorf("a second owner right after the early release: %v, want held until at-least has passed", err)
	}

	// Without at-least a release frees the lock at once.
	free, err := tl.Acquire(ctx, "free", dialects.Options{AtMost: atMost, Owner: "node-a"})
	if err != nil {
		t.Fatal(err)
	}
	if err := free.Release(ctx); err != nil {
		t.Fatal(err)
	}
	again, err := tl.Acquire(ctx, "free", dialects.Options{AtMost: atMost, Owner: "node-b"})
	if err != nil {
		t.Fatalf("a second owner right after a release without at-least: %v", err)
	}
	_ = again.Release(ctx)
}
