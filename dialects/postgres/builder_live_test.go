package postgres

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/locktable"
)

// stmtRunner sends Builder statements straight to the server, binding the
// values a test gives, so the SQL is proven without the locktable engine.
type stmtRunner struct {
	t      *testing.T
	db     *sql.DB
	schema dialects.Schema
}

type bind struct {
	name, owner     string
	token           int64
	atMost, atLeast time.Duration
}

func (r stmtRunner) values(args []locktable.Arg, b bind) []any {
	out := make([]any, len(args))
	for i, a := range args {
		switch a {
		case locktable.ArgName:
			out[i] = b.name
		case locktable.ArgOwner:
			out[i] = b.owner
		case locktable.ArgToken:
			out[i] = b.token
		case locktable.ArgAtMostMs:
			out[i] = b.atMost.Milliseconds()
		case locktable.ArgAtLeastMs:
			out[i] = b.atLeast.Milliseconds()
		}
	}
	return out
}

// run sends a ResultRow statement: (token or 1, true) when it returned a
// row, (0, false) when it did not.
func (r stmtRunner) run(q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, st locktable.Stmt, b bind) (int64, bool) {
	r.t.Helper()
	var v int64
	err := q.QueryRowContext(testCtx(r.t), st.SQL, r.values(st.Args, b)...).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false
	}
	if err != nil {
		r.t.Fatalf("%v\n%s", err, st.SQL)
	}
	return v, true
}

type liveRow struct {
	owner                  string
	token                  int64
	lockedAt, until, dbNow int64
}

func (r stmtRunner) inspect(name string) (liveRow, bool) {
	r.t.Helper()
	st := Builder{}.Inspect(r.schema)
	var row liveRow
	err := r.db.QueryRowContext(testCtx(r.t), st.SQL, r.values(st.Args, bind{name: name})...).Scan(&row.owner, &row.token, &row.lockedAt, &row.until, &row.dbNow)
	if errors.Is(err, sql.ErrNoRows) {
		return row, false
	}
	if err != nil {
		r.t.Fatalf("inspect: %v", err)
	}
	return row, true
}

// tempTable creates a uniquely named table of preset and drops it after.
func tempTable(t *testing.T, db *sql.DB, preset string) stmtRunner {
	t.Helper()
	s, err := dialects.Table{Preset: preset, Name: unique("sl_" + preset + "_")}.Schema()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(testCtx(t), Builder{}.Create(s)); err != nil {
		t.Fatalf("create: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := db.ExecContext(ctx, "DROP TABLE IF EXISTS "+s.Table); err != nil {
			t.Errorf("drop %s: %v", s.Table, err)
		}
	})
	return stmtRunner{t: t, db: db, schema: s}
}

func forEachPreset(t *testing.T, f func(t *testing.T, r stmtRunner)) {
	db := liveDB(t)
	for _, preset := range dialects.Presets() {
		t.Run(preset, func(t *testing.T) { f(t, tempTable(t, db, preset)) })
	}
}

func TestBuilderLiveAcquireIsExclusive(t *testing.T) {
	forEachPreset(t, func(t *testing.T, r stmtRunner) {
		b, s := Builder{}, r.schema
		name := unique("ex-")
		tok, ok := r.run(r.db, b.Acquire(s), bind{name: name, owner: "alice", atMost: time.Minute})
		if !ok || tok != 1 {
			t.Fatalf("first acquire = %d, %v; want 1, true", tok, ok)
		}
		if _, ok := r.run(r.db, b.Acquire(s), bind{name: name, owner: "bob", atMost: time.Minute}); ok {
			t.Fatal("second acquire by another owner succeeded while the lease runs")
		}
		if _, ok := r.run(r.db, b.Acquire(s), bind{name: name, owner: "alice", atMost: time.Minute}); ok {
			t.Fatal("re-acquire by the owner succeeded while the lease runs")
		}
		row, found := r.inspect(name)
		if !found || row.owner != "alice" {
			t.Fatalf("inspect = %+v, %v; want alice's row", row, found)
		}
		if lease := row.until - row.lockedAt; lease != time.Minute.Milliseconds() {
			t.Errorf("until - locked_at = %dms, want exactly %dms", lease, time.Minute.Milliseconds())
		}
		if age := row.dbNow - row.lockedAt; age < 0 || age > 5000 {
			t.Errorf("locked_at is %dms before the database's now; want the clock at acquire", age)
		}
	})
}

func TestBuilderLiveOwnerCheck(t *testing.T) {
	forEachPreset(t, func(t *testing.T, r stmtRunner) {
		b, s := Builder{}, r.schema
		name := unique("own-")
		tok, ok := r.run(r.db, b.Acquire(s), bind{name: name, owner: "alice", atMost: time.Minute})
		if !ok {
			t.Fatal("acquire failed")
		}
		before, _ := r.inspect(name)
		if _, ok := r.run(r.db, b.Refresh(s), bind{name: name, owner: "bob", atMost: time.Hour}); ok {
			t.Error("refresh by the wrong owner succeeded")
		}
		if _, ok := r.run(r.db, b.Release(s), bind{name: name, owner: "bob"}); ok {
			t.Error("release by the wrong owner succeeded")
		}
		if after, _ := r.inspect(name); after.owner != before.owner || after.until != before.until || after.token != before.token {
			t.Errorf("refused calls changed the row: %+v -> %+v", before, after)
		}
		if s.TokenCol != "" {
			if _, ok := r.run(r.db, b.Refresh(s), bind{name: name, owner: "alice", token: tok + 7, atMost: time.Hour}); ok {
				t.Error("refresh with a wrong token succeeded")
			}
		}
		got, ok := r.run(r.db, b.Refresh(s), bind{name: name, owner: "alice", token: tok, atMost: time.Hour})
		if !ok || got != tok {
			t.Fatalf("refresh by the owner = %d, %v; want %d, true", got, ok, tok)
		}
		row, _ := r.inspect(name)
		if left := row.until - row.dbNow; left < time.Hour.Milliseconds()-5000 || left > time.Hour.Milliseconds() {
			t.Errorf("after refresh the lease has %dms left, want about an hour from the database's now", left)
		}
		if _, ok := r.run(r.db, b.Release(s), bind{name: name, owner: "alice"}); !ok {
			t.Fatal("release by the owner (token 0) failed")
		}
		if _, ok := r.run(r.db, b.Release(s), bind{name: name, owner: "alice"}); ok {
			t.Error("second release succeeded")
		}
		if _, ok := r.run(r.db, b.Refresh(s), bind{name: name, owner: "alice", atMost: time.Hour}); ok {
			t.Error("refresh after release succeeded")
		}
		// at-least 0: free at once, for anyone.
		if _, ok := r.run(r.db, b.Acquire(s), bind{name: name, owner: "bob", atMost: time.Minute}); !ok {
			t.Error("acquire right after a release without at-least failed")
		}
	})
}

func TestBuilderLiveExpiryTakeoverGrowsToken(t *testing.T) {
	forEachPreset(t, func(t *testing.T, r stmtRunner) {
		b, s := Builder{}, r.schema
		name := unique("exp-")
		first, ok := r.run(r.db, b.Acquire(s), bind{name: name, owner: "alice", atMost: 150 * time.Millisecond})
		if !ok {
			t.Fatal("acquire failed")
		}
		waitExpired(t, r, name)
		second, ok := r.run(r.db, b.Acquire(s), bind{name: name, owner: "bob", atMost: time.Minute})
		if !ok {
			t.Fatal("takeover of an expired lease failed")
		}
		if s.TokenCol != "" && second != first+1 {
			t.Errorf("token after takeover = %d, want %d", second, first+1)
		}
		if _, ok := r.run(r.db, b.Refresh(s), bind{name: name, owner: "alice", atMost: time.Minute}); ok {
			t.Error("the previous owner refreshed a lease that was taken over")
		}
		if _, ok := r.run(r.db, b.Release(s), bind{name: name, owner: "alice"}); ok {
			t.Error("the previous owner released a lease that was taken over")
		}
		if row, _ := r.inspect(name); row.owner != "bob" {
			t.Errorf("owner = %q, want bob", row.owner)
		}
	})
}

func TestBuilderLiveAtLeastHolds(t *testing.T) {
	forEachPreset(t, func(t *testing.T, r stmtRunner) {
		b, s := Builder{}, r.schema
		name := unique("least-")
		atLeast := 400 * time.Millisecond
		if _, ok := r.run(r.db, b.Acquire(s), bind{name: name, owner: "alice", atMost: time.Minute}); !ok {
			t.Fatal("acquire failed")
		}
		if _, ok := r.run(r.db, b.Release(s), bind{name: name, owner: "alice", atLeast: atLeast}); !ok {
			t.Fatal("release failed")
		}
		row, _ := r.inspect(name)
		held := row.lockedAt + atLeast.Milliseconds()
		if row.dbNow < held {
			// Released inside the at-least window: the lock stays until then.
			if row.until != held {
				t.Errorf("until after release = locked_at + %dms, want locked_at + %s", row.until-row.lockedAt, atLeast)
			}
			if _, ok := r.run(r.db, b.Acquire(s), bind{name: name, owner: "bob", atMost: time.Minute}); ok {
				t.Fatal("acquire succeeded inside the at-least hold")
			}
		} else if row.until < held || row.until > row.dbNow {
			// A slow machine released after the window: until is the release's now.
			t.Errorf("released after the at-least window: until = locked_at + %dms, want between %s and now", row.until-row.lockedAt, atLeast)
		}
		waitExpired(t, r, name)
		if _, ok := r.run(r.db, b.Acquire(s), bind{name: name, owner: "bob", atMost: time.Minute}); !ok {
			t.Error("acquire after the at-least hold failed")
		}
	})
}

func TestBuilderLiveExpireAndList(t *testing.T) {
	forEachPreset(t, func(t *testing.T, r stmtRunner) {
		b, s := Builder{}, r.schema
		names := []string{"b-" + unique(""), "a-" + unique(""), "c-" + unique("")}
		for _, n := range names {
			if _, ok := r.run(r.db, b.Acquire(s), bind{name: n, owner: "owner-" + n, atMost: time.Minute}); !ok {
				t.Fatalf("acquire %s failed", n)
			}
		}
		if _, ok := r.run(r.db, b.Expire(s), bind{name: names[0]}); !ok {
			t.Fatal("expire of a live lease failed")
		}
		if _, ok := r.run(r.db, b.Expire(s), bind{name: names[0]}); ok {
			t.Error("expire of an ended lease reported success")
		}
		if _, ok := r.run(r.db, b.Acquire(s), bind{name: names[0], owner: "bob", atMost: time.Minute}); !ok {
			t.Error("acquire right after expire failed")
		}

		rows, err := r.db.QueryContext(testCtx(t), b.List(s).SQL)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var got []string
		for rows.Next() {
			var name string
			var row liveRow
			if err := rows.Scan(&name, &row.owner, &row.token, &row.lockedAt, &row.until, &row.dbNow); err != nil {
				t.Fatal(err)
			}
			if row.until <= row.dbNow {
				t.Errorf("listed %s as ended, all leases are live", name)
			}
			got = append(got, name+"="+row.owner)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		want := []string{names[1] + "=owner-" + names[1], names[0] + "=bob", names[2] + "=owner-" + names[2]}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("list = %v, want %v", got, want)
		}
	})
}

// Inside a transaction, now() stays at the transaction's start; the
// statements must read the wall clock instead (pitfall: now() in leases).
func TestBuilderLiveUsesWallClockInsideTransactions(t *testing.T) {
	db := liveDB(t)
	r := tempTable(t, db, dialects.PresetSchedlock)
	tx, err := db.BeginTx(testCtx(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	var txStartMs int64
	if err := tx.QueryRowContext(testCtx(t), "SELECT "+epochMs("now()")+" FROM pg_sleep(0.3)").Scan(&txStartMs); err != nil {
		t.Fatal(err)
	}
	name := unique("clock-")
	if _, ok := r.run(tx, Builder{}.Acquire(r.schema), bind{name: name, owner: "alice", atMost: time.Minute}); !ok {
		t.Fatal("acquire failed")
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	row, _ := r.inspect(name)
	if row.lockedAt-txStartMs < 300 {
		t.Errorf("locked_at is %dms after the transaction start, want at least the 300ms slept: the lease used now()", row.lockedAt-txStartMs)
	}
}

func TestBuilderLiveLongestNames(t *testing.T) {
	forEachPreset(t, func(t *testing.T, r stmtRunner) {
		// The longest name the column keeps, in 4-byte characters.
		max := Builder{}.MaxNameRunes(r.schema)
		name := dialects.MapName(strings.Repeat("🔒", max+40), max)
		if _, ok := r.run(r.db, Builder{}.Acquire(r.schema), bind{name: name, owner: strings.Repeat("o", 255), atMost: time.Minute}); !ok {
			t.Fatal("acquire of the longest name failed")
		}
		if row, found := r.inspect(name); !found || len(row.owner) != 255 {
			t.Errorf("inspect of the longest name = %+v, %v", row, found)
		}
	})
}

func TestBuilderLiveMissingTable(t *testing.T) {
	db := liveDB(t)
	s, _ := dialects.Table{Name: unique("sl_absent_")}.Schema()
	_, err := db.ExecContext(testCtx(t), Builder{}.Inspect(s).SQL, "x")
	if err == nil || !(Builder{}).IsMissingTable(err) {
		t.Fatalf("statement on a missing table = %v; IsMissingTable must recognise it", err)
	}
}

// waitExpired polls until the database's clock has passed the row's lease.
func waitExpired(t *testing.T, r stmtRunner, name string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		row, found := r.inspect(name)
		if !found {
			t.Fatalf("row %s vanished", name)
		}
		if row.until <= row.dbNow {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("lease of %s did not expire: %+v", name, row)
		}
		time.Sleep(time.Duration(row.until-row.dbNow)*time.Millisecond + 5*time.Millisecond)
	}
}
