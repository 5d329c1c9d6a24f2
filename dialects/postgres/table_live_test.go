package postgres

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/locktable"
	"github.com/schedlock/schedlock/dialects/locktable/locktabletest"
)

// The registered dialect's table locker, end to end through the locktable
// engine: missing table, create, exclusive acquire, release, token growth.
func TestTableLockerLive(t *testing.T) {
	db := liveDB(t)
	ctx := testCtx(t)
	opened, err := New(ctx, db, nil)
	if err != nil {
		t.Fatal(err)
	}
	locker, err := opened.TableLocker(dialects.Table{Name: unique("sl_engine_")})
	if err != nil {
		t.Fatal(err)
	}
	name := unique("job-")
	_, err = locker.Acquire(ctx, name, dialects.Options{})
	var missing *dialects.MissingTableError
	if !errors.As(err, &missing) || missing.CreateSQL != locker.CreateSQL() {
		t.Fatalf("Acquire on a missing table = %v, want a MissingTableError with the CREATE statement", err)
	}
	if err := locker.CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := db.ExecContext(cctx, "DROP TABLE IF EXISTS "+locker.Schema().Table); err != nil {
			t.Errorf("drop: %v", err)
		}
	})

	first, err := locker.Acquire(ctx, name, dialects.Options{Owner: "alice", AtMost: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	_, err = locker.Acquire(ctx, name, dialects.Options{Owner: "bob"})
	var held *dialects.HeldError
	if !errors.As(err, &held) || held.Holder != "alice" || held.Until.IsZero() {
		t.Fatalf("second Acquire = %v, want a HeldError naming alice and the lease end", err)
	}
	if err := first.Release(ctx); err != nil {
		t.Fatal(err)
	}
	second, err := locker.Acquire(ctx, name, dialects.Options{Owner: "bob"})
	if err != nil {
		t.Fatalf("Acquire after Release: %v", err)
	}
	t1, _ := first.Token()
	t2, ok := second.Token()
	if !ok || t2 != t1+1 {
		t.Errorf("tokens %d then %d, want them to grow by one", t1, t2)
	}
	if err := first.Release(ctx); !errors.Is(err, dialects.ErrLeaseLost) {
		t.Errorf("second Release of a released lease = %v, want ErrLeaseLost", err)
	}
	row, found, err := locker.Inspect(ctx, name)
	if err != nil || !found || row.Owner != "bob" || row.Token != t2 || row.Expired() {
		t.Errorf("Inspect = %+v, %v, %v; want bob's live row with token %d", row, found, err, t2)
	}
	if err := second.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// The batch refresh statement on the live server, on every preset: one
// statement renews exactly the rows still held by each lease
// (locktabletest.CheckRefreshAll).
func TestRefreshBatchLive(t *testing.T) {
	db := liveDB(t)
	ctx := testCtx(t)
	opened, err := New(ctx, db, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, preset := range dialects.Presets() {
		t.Run(preset, func(t *testing.T) {
			tl, err := opened.TableLocker(dialects.Table{Preset: preset, Name: unique("sl_batch_")})
			if err != nil {
				t.Fatal(err)
			}
			l, ok := tl.(*locktable.Locker)
			if !ok {
				t.Fatalf("table locker is a %T, want *locktable.Locker", tl)
			}
			if err := l.CreateTable(ctx); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				if _, err := db.ExecContext(cctx, "DROP TABLE IF EXISTS "+l.Schema().Table); err != nil {
					t.Errorf("drop: %v", err)
				}
			})
			locktabletest.CheckRefreshAll(t, l)
		})
	}
}
