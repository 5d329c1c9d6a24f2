package locktabletest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// Article is an application that locks a sys_sched_lock table the way the
// published home-grown designs do (docs/strategies.md, Sharing
// sys_sched_lock with applications that lock it by INSERT): INSERT the row
// to lock, a duplicate key meaning the lock is held; DELETE … WHERE
// lock_name = ? AND lock_owner = ? to unlock. It never takes over an
// expired row. Times are computed by the application and bound as text
// "YYYY-MM-DD HH:MM:SS.SSS" in UTC.
type Article struct {
	// Insert has the placeholders lock_name, lock_owner, acquire_time,
	// expire_time; Delete lock_name, lock_owner; Owner lock_name (it
	// selects the row's lock_owner).
	Insert, Delete, Owner string
	// IsDuplicate recognises the database's duplicate-key error.
	IsDuplicate func(error) bool
	// IsAborted, when set, recognises an error after which the INSERT did
	// nothing (a deadlock victim): the application did not get the lock
	// this time, as it does when the key is taken.
	IsAborted func(error) bool
}

// ArticleSQL is Article's SQL for table, with "?" placeholders, or
// "$1, $2, …" when numbered is set; cast, when set, wraps each time
// placeholder (PostgreSQL: "%s::timestamp").
func ArticleSQL(table string, numbered bool, cast string) Article {
	ph := func(i int) string {
		if numbered {
			return fmt.Sprintf("$%d", i)
		}
		return "?"
	}
	tm := func(i int) string {
		if cast == "" {
			return ph(i)
		}
		return fmt.Sprintf(cast, ph(i))
	}
	return Article{
		Insert: "INSERT INTO " + table + " (lock_name, lock_owner, acquire_time, expire_time) VALUES (" +
			ph(1) + ", " + ph(2) + ", " + tm(3) + ", " + tm(4) + ")",
		Delete: "DELETE FROM " + table + " WHERE lock_name = " + ph(1) + " AND lock_owner = " + ph(2),
		Owner:  "SELECT lock_owner FROM " + table + " WHERE lock_name = " + ph(1),
	}
}

// lock runs the article's INSERT: held reports a duplicate key.
func (a Article) lock(ctx context.Context, db *sql.DB, name, owner string, lease time.Duration) (got bool, err error) {
	now := time.Now().UTC()
	const layout = "2006-01-02 15:04:05.000"
	_, err = db.ExecContext(ctx, a.Insert, name, owner, now.Format(layout), now.Add(lease).Format(layout))
	switch {
	case err == nil:
		return true, nil
	case a.IsDuplicate(err), a.IsAborted != nil && a.IsAborted(err):
		return false, nil
	}
	return false, err
}

// RaceResult is what ArticleRace saw.
type RaceResult struct {
	// SchedlockHolds and ArticleHolds count the critical sections each
	// side entered.
	SchedlockHolds, ArticleHolds int64
	// DoubleHolds counts critical sections entered while another was in
	// one.
	DoubleHolds int64
	// Wedged counts the article side's INSERTs refused by a row whose
	// owner, a schedlock lease, had already been released: a row a
	// release left behind.
	Wedged int64
	// Refused counts the article side's refused INSERTs in all.
	Refused int64
	// RowsLeft is the number of rows of the name once every side is done.
	RowsLeft int
}

// ArticleRace runs perSide goroutines of schedlock (Acquire of name with
// l, a short critical section, Release) against perSide goroutines of the
// article's protocol on the same table and name, rounds tries each, and
// returns what it counted; every error fails t.
func ArticleRace(t *testing.T, db *sql.DB, l dialects.Locker, a Article, table, name string, perSide, rounds int) RaceResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var (
		res      RaceResult
		inside   atomic.Int64
		released sync.Map     // owner of a schedlock lease whose Release has returned → releases before it
		releases atomic.Int64 // Releases returned so far
		wg       sync.WaitGroup
		errMu    sync.Mutex
		errs     []error
	)
	fail := func(err error) {
		errMu.Lock()
		errs = append(errs, err)
		errMu.Unlock()
	}
	critical := func(holds *int64) {
		if inside.Add(1) != 1 {
			atomic.AddInt64(&res.DoubleHolds, 1)
		}
		atomic.AddInt64(holds, 1)
		time.Sleep(200 * time.Microsecond)
		inside.Add(-1)
	}
	for g := range perSide {
		wg.Add(2)
		go func() { // schedlock
			defer wg.Done()
			for r := range rounds {
				owner := fmt.Sprintf("schedlock-%d-%d", g, r)
				lease, err := l.Acquire(ctx, name, dialects.Options{Owner: owner, AtMost: time.Minute})
				if err != nil {
					if !isHeld(err) {
						fail(fmt.Errorf("schedlock %s: acquire: %w", owner, err))
					}
					continue
				}
				critical(&res.SchedlockHolds)
				if err := lease.Release(ctx); err != nil {
					fail(fmt.Errorf("schedlock %s: release: %w", owner, err))
					continue
				}
				released.Store(owner, releases.Add(1))
			}
		}()
		go func() { // the article's protocol
			defer wg.Done()
			for r := range rounds {
				owner := fmt.Sprintf("article-%d-%d", g, r)
				got, err := a.lock(ctx, db, name, owner, time.Minute)
				if err != nil {
					fail(fmt.Errorf("article %s: insert: %w", owner, err))
					continue
				}
				if !got {
					atomic.AddInt64(&res.Refused, 1)
					// A holder whose release had returned before this read
					// began left its row behind.
					before := releases.Load()
					var holder string
					err := db.QueryRowContext(ctx, a.Owner, name).Scan(&holder)
					if err == nil {
						if n, gone := released.Load(holder); gone && n.(int64) <= before {
							atomic.AddInt64(&res.Wedged, 1)
						}
					} else if !errors.Is(err, sql.ErrNoRows) {
						fail(fmt.Errorf("article %s: read the holder: %w", owner, err))
					}
					continue
				}
				critical(&res.ArticleHolds)
				if _, err := db.ExecContext(ctx, a.Delete, name, owner); err != nil {
					fail(fmt.Errorf("article %s: delete: %w", owner, err))
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		t.Error(err)
	}
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM "+table).Scan(&res.RowsLeft); err != nil {
		t.Fatal(err)
	}
	return res
}

func isHeld(err error) bool { return errors.Is(err, dialects.ErrHeld) }

// CheckArticleInterop proves that schedlock's sys_sched_lock preset (tl, on
// table, created with the article's DDL and a lock_name of width
// characters) and an application that locks the table with Article's
// protocol exclude each other and never wedge each other:
//
//   - race: 10 goroutines of each, 200 tries each, never two holders at
//     once, both sides getting the lock, no INSERT refused by a row a
//     schedlock release left, and no row left at the end;
//   - release: right after schedlock's release the article's INSERT goes in;
//   - at-least: an early release keeps the row (the INSERT is refused)
//     until at-least has passed, then the locker deletes it;
//   - force: unlock --force (Expire) deletes a row the article's crashed
//     process left expired, and a live one;
//   - width: a name of width characters is one lock for both sides, as it
//     is; one character more is refused before anything is written.
func CheckArticleInterop(t *testing.T, db *sql.DB, tl dialects.TableLocker, a Article, table string, width int) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	count := func(t *testing.T) int {
		t.Helper()
		var n int
		if err := db.QueryRowContext(ctx, "SELECT count(*) FROM "+table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	mustLock := func(t *testing.T, name, owner string, want bool) {
		t.Helper()
		got, err := a.lock(ctx, db, name, owner, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("article INSERT of %.40q went in: %v; want %v", name, got, want)
		}
	}
	unlock := func(t *testing.T, name, owner string) {
		t.Helper()
		if _, err := db.ExecContext(ctx, a.Delete, name, owner); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("race", func(t *testing.T) {
		res := ArticleRace(t, db, tl, a, table, "race", 10, 200)
		t.Logf("%+v", res)
		if res.DoubleHolds != 0 {
			t.Errorf("%d critical sections overlapped: two holders at once", res.DoubleHolds)
		}
		if res.Wedged != 0 {
			t.Errorf("%d article INSERTs were refused by a row schedlock had released", res.Wedged)
		}
		if res.SchedlockHolds == 0 || res.ArticleHolds == 0 {
			t.Errorf("schedlock held the lock %d times, the article's side %d times; want both", res.SchedlockHolds, res.ArticleHolds)
		}
		if res.RowsLeft != 0 {
			t.Errorf("%d rows left once every holder released", res.RowsLeft)
		}
	})
	t.Run("release", func(t *testing.T) {
		lease, err := tl.Acquire(ctx, "release", dialects.Options{Owner: "schedlock-a"})
		if err != nil {
			t.Fatal(err)
		}
		mustLock(t, "release", "article-a", false)
		if err := lease.Release(ctx); err != nil {
			t.Fatal(err)
		}
		mustLock(t, "release", "article-a", true)
		if _, err := tl.Acquire(ctx, "release", dialects.Options{Owner: "schedlock-b"}); !errors.Is(err, dialects.ErrHeld) {
			t.Fatalf("schedlock acquire while the article's side holds = %v; want held", err)
		}
		unlock(t, "release", "article-a")
		if n := count(t); n != 0 {
			t.Fatalf("%d rows left", n)
		}
	})
	t.Run("at-least", func(t *testing.T) {
		lease, err := tl.Acquire(ctx, "short", dialects.Options{Owner: "schedlock-a", AtMost: time.Minute, AtLeast: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if err := lease.Release(ctx); err != nil {
			t.Fatal(err)
		}
		swept := dialects.Freed(lease)
		if row, found, err := tl.Inspect(ctx, "short"); err != nil || !found || row.Expired() {
			t.Fatalf("row right after an early release = %+v, %v, %v; want it kept, live", row, found, err)
		}
		mustLock(t, "short", "article-a", false)
		select {
		case <-swept:
		case <-time.After(time.Minute):
			t.Fatal("the kept row was not deleted after at-least")
		}
		mustLock(t, "short", "article-a", true)
		unlock(t, "short", "article-a")
	})
	t.Run("force", func(t *testing.T) {
		// The article's process crashed holding the lock: its row stays,
		// and expires; nothing of that application ever deletes it.
		past := time.Now().UTC().Add(-time.Hour).Format("2006-01-02 15:04:05.000")
		if _, err := db.ExecContext(ctx, a.Insert, "crashed", "article-dead", past, past); err != nil {
			t.Fatal(err)
		}
		mustLock(t, "crashed", "article-b", false)
		exp := tl
		if done, err := exp.Expire(ctx, "crashed"); err != nil || !done {
			t.Fatalf("forced unlock of the expired row = %v, %v; want it deleted", done, err)
		}
		mustLock(t, "crashed", "article-b", true)
		unlock(t, "crashed", "article-b")
		if _, err := tl.Acquire(ctx, "live", dialects.Options{Owner: "schedlock-a"}); err != nil {
			t.Fatal(err)
		}
		if done, err := exp.Expire(ctx, "live"); err != nil || !done {
			t.Fatalf("forced unlock of a live row = %v, %v; want it deleted", done, err)
		}
		if n := count(t); n != 0 {
			t.Fatalf("%d rows left", n)
		}
	})
	t.Run("width", func(t *testing.T) {
		full := strings.Repeat("名", width-3) + "end"
		lease, err := tl.Acquire(ctx, full, dialects.Options{Owner: "schedlock-a"})
		if err != nil {
			t.Fatal(err)
		}
		mustLock(t, full, "article-a", false) // one lock for both sides, as it is
		var stored string
		if err := db.QueryRowContext(ctx, "SELECT lock_name FROM "+table).Scan(&stored); err != nil || stored != full {
			t.Fatalf("stored name %.40q, %v; want the name as it is", stored, err)
		}
		if err := lease.Release(ctx); err != nil {
			t.Fatal(err)
		}
		_, err = tl.Acquire(ctx, full+"x", dialects.Options{Owner: "schedlock-a"})
		var tooLong *dialects.NameTooLongError
		if !errors.As(err, &tooLong) || tooLong.Column.Width != width {
			t.Fatalf("acquire of a name of %d characters = %v; want a NameTooLongError with width %d", width+1, err, width)
		}
		if n := count(t); n != 0 {
			t.Fatalf("%d rows after the refusal; want none", n)
		}
	})
}
