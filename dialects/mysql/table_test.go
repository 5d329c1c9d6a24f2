package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/locktable"
)

// liveTable creates a uniquely named table of preset with b's SQL and drops
// it when the test ends.
func liveTable(t *testing.T, db *sql.DB, b *Builder, preset string) dialects.Schema {
	t.Helper()
	s, err := dialects.Table{Preset: preset, Name: uniqueName("sl_" + preset[:4] + "_")}.Schema()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(testContext(t), b.Create(s)); err != nil {
		t.Fatalf("create %s: %v", s.Table, err)
	}
	t.Cleanup(func() { _, _ = db.ExecContext(context.Background(), "DROP TABLE IF EXISTS "+s.Table) })
	return s
}

// t0 is the fixed database clock of the branch tests, in ms since the
// epoch (2027-01-15T08:00:00Z): SET TIMESTAMP freezes UTC_TIMESTAMP(3).
const t0 = int64(1_800_000_000_000)

// clockConn is one connection whose UTC_TIMESTAMP(3) the test sets.
type clockConn struct {
	t *testing.T
	c *sql.Conn
	b *Builder
	s dialects.Schema
}

func newClockConn(t *testing.T, db *sql.DB, b *Builder, s dialects.Schema) *clockConn {
	c, err := db.Conn(testContext(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = c.ExecContext(context.Background(), "SET TIMESTAMP = DEFAULT")
		_ = c.Close()
	})
	return &clockConn{t: t, c: c, b: b, s: s}
}

// at sets the connection's clock to ms since the epoch.
func (k *clockConn) at(ms int64) {
	k.t.Helper()
	if _, err := k.c.ExecContext(testContext(k.t), fmt.Sprintf("SET TIMESTAMP = %d.%03d", ms/1000, ms%1000)); err != nil {
		k.t.Fatalf("set the clock: %v", err)
	}
}

// call binds the values a statement needs.
type call struct {
	name, owner       string
	token             int64
	atMost, atLeastMs int64
}

// run sends st and returns its insert id and affected-row count.
func (k *clockConn) run(st locktable.Stmt, v call) (id, affected int64) {
	k.t.Helper()
	args := make([]any, len(st.Args))
	for i, a := range st.Args {
		switch a {
		case locktable.ArgName:
			args[i] = v.name
		case locktable.ArgOwner:
			args[i] = v.owner
		case locktable.ArgToken:
			args[i] = v.token
		case locktable.ArgAtMostMs:
			args[i] = v.atMost
		case locktable.ArgAtLeastMs:
			args[i] = v.atLeastMs
		}
	}
	res, err := k.c.ExecContext(testContext(k.t), st.SQL, args...)
	if err != nil {
		k.t.Fatalf("%s: %v", st.SQL, err)
	}
	if id, err = res.LastInsertId(); err != nil {
		k.t.Fatal(err)
	}
	if affected, err = res.RowsAffected(); err != nil {
		k.t.Fatal(err)
	}
	return id, affected
}

// lockRow is a row as Inspect reads it, times in ms since the epoch.
type lockRow struct {
	owner                  string
	token, lockedAt, until int64
}

func (k *clockConn) row(name string) lockRow {
	k.t.Helper()
	var r lockRow
	var now int64
	if err := k.c.QueryRowContext(testContext(k.t), k.b.Inspect(k.s).SQL, name).Scan(&r.owner, &r.token, &r.lockedAt, &r.until, &now); err != nil {
		k.t.Fatalf("inspect %q: %v", name, err)
	}
	return r
}

// connModes are the client settings whose outcome must not differ:
// server-side prepared statements, text protocol, and CLIENT_FOUND_ROWS.
var connModes = []struct {
	name  string
	tweak func(*mysql.Config)
}{
	{"prepared", nil},
	{"text", func(c *mysql.Config) { c.InterpolateParams = true }},
	{"found-rows", func(c *mysql.Config) { c.ClientFoundRows = true }},
}

// TestInsertIDBranches proves, statement by statement and on the server's
// own clock (frozen with SET TIMESTAMP), that the insert id reports every
// outcome: new row, live row, expired row, the same-millisecond refresh that
// changes nothing, a wrong owner or token, expire.
func TestInsertIDBranches(t *testing.T) {
	for _, mode := range connModes {
		t.Run(mode.name, func(t *testing.T) {
			db := openLive(t, mode.tweak)
			d, err := New(testContext(t), db, nil)
			if err != nil {
				t.Fatal(err)
			}
			b := NewBuilder(d.Info)
			for _, preset := range dialects.Presets() {
				t.Run(preset, func(t *testing.T) {
					s := liveTable(t, db, b, preset)
					insertIDBranches(t, newClockConn(t, db, b, s), mode.name == "found-rows")
				})
			}
		})
	}
}

// TestInsertIDBranchesLegacyShedlock runs the branches on a ShedLock table
// as servers with explicit_defaults_for_timestamp=OFF create it from
// ShedLock's README: lock_until, the first TIMESTAMP column, silently gets
// ON UPDATE CURRENT_TIMESTAMP. Every statement assigns lock_until
// explicitly, so the server never overwrites it.
func TestInsertIDBranchesLegacyShedlock(t *testing.T) {
	db := openLive(t, nil)
	d, err := New(testContext(t), db, nil)
	if err != nil {
		t.Fatal(err)
	}
	b := NewBuilder(d.Info)
	s, err := dialects.Table{Preset: dialects.PresetShedlock, Name: uniqueName("sl_legacy_")}.Schema()
	if err != nil {
		t.Fatal(err)
	}
	ddl := "CREATE TABLE " + s.Table + "(name VARCHAR(64) NOT NULL," +
		" lock_until TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3)," +
		" locked_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3), locked_by VARCHAR(255) NOT NULL, PRIMARY KEY (name))"
	if _, err := db.ExecContext(testContext(t), ddl); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = db.ExecContext(context.Background(), "DROP TABLE IF EXISTS "+s.Table) })
	insertIDBranches(t, newClockConn(t, db, b, s), false)
}

func insertIDBranches(t *testing.T, k *clockConn, foundRows bool) {
	hasToken := k.s.TokenCol != ""
	// tok is the insert id a success reports for token n.
	tok := func(n int64) int64 {
		if hasToken {
			return n
		}
		return 1
	}
	want := func(owner string, token, lockedAt, until int64) lockRow {
		if !hasToken {
			token = 0
		}
		return lockRow{owner, token, lockedAt, until}
	}
	check := func(step string, gotID, wantID int64, name string, wantRow lockRow) {
		t.Helper()
		if gotID != wantID {
			t.Errorf("%s: insert id %d, want %d", step, gotID, wantID)
		}
		if got := k.row(name); got != wantRow {
			t.Errorf("%s: row %+v, want %+v", step, got, wantRow)
		}
	}
	acquire, refresh, release, expire := k.b.Acquire(k.s), k.b.Refresh(k.s), k.b.Release(k.s), k.b.Expire(k.s)
	const name = "nightly-report"

	// A new name inserts its row: token 1.
	k.at(t0)
	id, affected := k.run(acquire, call{name: name, owner: "A", atMost: 60_000})
	check("new row", id, 1, name, want("A", 1, t0, t0+60_000))
	if affected != 1 {
		t.Errorf("new row: %d rows affected, want 1", affected)
	}

	// A live row is left alone, one millisecond before its end.
	k.at(t0 + 59_999)
	id, _ = k.run(acquire, call{name: name, owner: "B", atMost: 60_000})
	check("live row", id, 0, name, want("A", 1, t0, t0+60_000))
	id, _ = k.run(acquire, call{name: name, owner: "A", atMost: 60_000})
	check("live row, same owner", id, 0, name, want("A", 1, t0, t0+60_000))

	// Wrong owner (and wrong token) change nothing.
	id, _ = k.run(refresh, call{name: name, owner: "B", atMost: 60_000})
	check("refresh by another owner", id, 0, name, want("A", 1, t0, t0+60_000))
	id, _ = k.run(release, call{name: name, owner: "B"})
	check("release by another owner", id, 0, name, want("A", 1, t0, t0+60_000))
	if hasToken {
		id, _ = k.run(refresh, call{name: name, owner: "A", token: 7, atMost: 60_000})
		check("refresh with a stale token", id, 0, name, want("A", 1, t0, t0+60_000))
	}

	// Refresh extends from now; twice in the same millisecond the second
	// changes nothing, yet still reports success.
	k.at(t0 + 1_000)
	id, _ = k.run(refresh, call{name: name, owner: "A", token: 1, atMost: 60_000})
	check("refresh", id, tok(1), name, want("A", 1, t0, t0+61_000))
	id, affected = k.run(refresh, call{name: name, owner: "A", token: 1, atMost: 60_000})
	check("refresh, same millisecond", id, tok(1), name, want("A", 1, t0, t0+61_000))
	if wantAffected := map[bool]int64{false: 0, true: 1}[foundRows]; affected != wantAffected {
		t.Errorf("refresh, same millisecond: %d rows affected, want %d (rows-affected alone would misreport it)", affected, wantAffected)
	}
	id, _ = k.run(refresh, call{name: name, owner: "A", token: 0, atMost: 60_000})
	check("refresh without token check", id, tok(1), name, want("A", 1, t0, t0+61_000))

	// Release keeping locked_at + at-least, which here is the current end:
	// nothing changes, success is still reported.
	k.at(t0 + 2_000)
	id, _ = k.run(release, call{name: name, owner: "A", token: 1, atLeastMs: 61_000})
	check("release to the same end", id, tok(1), name, want("A", 1, t0, t0+61_000))
	// Release with no at-least ends the lease now; then it is no longer live.
	id, _ = k.run(release, call{name: name, owner: "A", token: 1})
	check("release", id, tok(1), name, want("A", 1, t0, t0+2_000))
	id, _ = k.run(release, call{name: name, owner: "A", token: 1})
	check("release twice", id, 0, name, want("A", 1, t0, t0+2_000))
	id, _ = k.run(refresh, call{name: name, owner: "A", token: 1, atMost: 60_000})
	check("refresh after release", id, 0, name, want("A", 1, t0, t0+2_000))

	// An expired row (until == now) is taken over: every column from the
	// new owner, token + 1. Each condition read the old lease end.
	id, _ = k.run(acquire, call{name: name, owner: "B", atMost: 30_000})
	check("expired row", id, tok(2), name, want("B", 2, t0+2_000, t0+32_000))

	// Expire ends any owner's live lease now, once.
	k.at(t0 + 3_000)
	id, _ = k.run(expire, call{name: name})
	check("expire", id, tok(2), name, want("B", 2, t0+2_000, t0+3_000))
	id, _ = k.run(expire, call{name: name})
	check("expire twice", id, 0, name, want("B", 2, t0+2_000, t0+3_000))
	id, _ = k.run(acquire, call{name: name, owner: "A", atMost: 10_000})
	check("acquire after expire", id, tok(3), name, want("A", 3, t0+3_000, t0+13_000))

	// A statement that matches nothing reports 0, whatever came before on
	// the connection.
	id, _ = k.run(refresh, call{name: "no-such-lock", owner: "A", atMost: 60_000})
	if id != 0 {
		t.Errorf("refresh of a missing row: insert id %d, want 0", id)
	}
}

// TestOnDuplicateKeyOrderMatters shows why Acquire assigns the lease end
// last: the server evaluates the assignments left to right with the new
// values, so a condition after lock_until's assignment no longer sees the
// expired lease and the takeover would be half done.
func TestOnDuplicateKeyOrderMatters(t *testing.T) {
	db := openLive(t, nil)
	d, err := New(testContext(t), db, nil)
	if err != nil {
		t.Fatal(err)
	}
	b := NewBuilder(d.Info)
	s := liveTable(t, db, b, dialects.PresetSchedlock)
	k := newClockConn(t, db, b, s)
	k.at(t0)
	k.run(b.Acquire(s), call{name: "n", owner: "A", atMost: 1_000})
	k.at(t0 + 5_000)
	wrongOrder := "INSERT INTO " + s.Table + " (name, locked_by, locked_at, lock_until, token) VALUES (?, ?, UTC_TIMESTAMP(3), TIMESTAMPADD(MICROSECOND, ? * 1000, UTC_TIMESTAMP(3)), 1)" +
		" ON DUPLICATE KEY UPDATE lock_until = IF(lock_until <= UTC_TIMESTAMP(3), VALUES(lock_until), lock_until), locked_by = IF(lock_until <= UTC_TIMESTAMP(3), VALUES(locked_by), locked_by)"
	if _, err := k.c.ExecContext(testContext(t), wrongOrder, "n", "B", 60_000); err != nil {
		t.Fatal(err)
	}
	if got := k.row("n"); got.owner != "A" || got.until != t0+65_000 {
		t.Fatalf("wrong-order upsert gave %+v; expected the half-done takeover (owner A, new end) that left-to-right evaluation predicts", got)
	}
	// The builder's order on the same situation takes the row over whole.
	k.at(t0 + 70_000)
	id, _ := k.run(b.Acquire(s), call{name: "n", owner: "B", atMost: 1_000})
	if got := k.row("n"); id != 2 || got != (lockRow{"B", 2, t0 + 70_000, t0 + 71_000}) {
		t.Errorf("Acquire after expiry: id %d, row %+v", id, got)
	}
}

// TestNameCollationLive: names differing in case, accents or trailing
// spaces are different locks in the native table.
func TestNameCollationLive(t *testing.T) {
	d := openDetected(t)
	b := NewBuilder(d.Info)
	s := liveTable(t, d.SQL, b, dialects.PresetSchedlock)
	k := newClockConn(t, d.SQL, b, s)
	k.at(t0)
	names := []string{"job", "JOB", "jöb", "jób"}
	if b.Collation != "utf8mb4_bin" { // NO PAD collations keep trailing spaces apart
		names = append(names, "job ")
	}
	for _, n := range names {
		if id, _ := k.run(b.Acquire(s), call{name: n, owner: "owner of " + n, atMost: 60_000}); id != 1 {
			t.Errorf("acquire %q: insert id %d, want 1 (a new, distinct row)", n, id)
		}
	}
	for _, n := range names {
		if got := k.row(n); got.owner != "owner of "+n {
			t.Errorf("row %q belongs to %q", n, got.owner)
		}
	}
}
