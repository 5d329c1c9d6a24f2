package dameng

import (
	"regexp"
	"strings"
	"testing"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/internal/oralike/oraliketest"
	"github.com/schedlock/schedlock/dialects/locktable/locktabletest"
)

// section is one statement of a golden file: "-- <op> (<note>)" and the
// SQL on the lines after it, each statement as it is sent (a DMSQL block
// ends in "END;" as part of its text).
type section = locktabletest.Section

var checkGolden = oraliketest.CheckGolden

var quotedRE = regexp.MustCompile(`'[^']*'`)

// checkPlaceholders proves sql has exactly n "?" placeholders outside
// string literals: the driver binds positionally, one value per "?".
func checkPlaceholders(t *testing.T, what, sql string, n int) {
	t.Helper()
	if got := strings.Count(quotedRE.ReplaceAllString(sql, "''"), "?"); got != n {
		t.Errorf("%s: %d placeholders for %d values", what, got, n)
	}
}

// tableSections are every statement the table strategy sends for s.
func tableSections(t *testing.T, s dialects.Schema) []section {
	t.Helper()
	b := &Builder{}
	for _, op := range locktabletest.Ops(b, s) {
		checkPlaceholders(t, op.Name, op.Stmt.SQL, len(op.Stmt.Args))
	}
	return append(locktabletest.Sections(b, s),
		section{Op: "drop", SQL: b.Drop(s)},
		section{Op: "columns", Note: "reads no row", SQL: "SELECT * FROM " + s.Table + " WHERE 1 = 0"})
}

// sessionSections are the detection, session-strategy, listing and kill
// statements, with the number of values each binds.
func sessionSections() []struct {
	section
	binds int
} {
	type s = struct {
		section
		binds int
	}
	return []s{
		{section{Op: "detect.version", Note: "result: V$VERSION rows", SQL: detectVersionSQL}, 0},
		{section{Op: "detect.mode", Note: "result: COMPATIBLE_MODE", SQL: detectModeSQL}, 0},
		{section{Op: "detect.dbms_lock", Note: "result: count of SYS.DBMS_LOCK packages", SQL: probeDBMSLockSQL}, 0},
		{section{Op: "trylock", Note: "args: lock name, out return code", SQL: tryLockSQL}, 2},
		{section{Op: "lock", Note: "args: lock name, out return code, timeout in whole seconds", SQL: lockSQL}, 3},
		{section{Op: "unlock", Note: "args: lock name, out return code", SQL: unlockSQL}, 2},
		{section{Op: "holds", Note: "args: lock name, out return code", SQL: holdsSQL}, 2},
		{section{Op: "list", Note: "result: session locks", SQL: listSessionLocksSQL}, 0},
		{section{Op: "kill", Note: "args: session id", SQL: killSQL}, 1},
		{section{Op: "kill.check", Note: "args: session id", SQL: sessionAliveSQL}, 1},
		{section{Op: "probe.privileges", Note: "result: session user, DBA role, CREATE TABLE", SQL: privilegesSQL}, 0},
		{section{Op: "probe.listing", Note: "result: count", SQL: lockListingSQL}, 0},
		{section{Op: "probe.views", Note: "result: count", SQL: lockViewsSQL}, 0},
		{section{Op: "probe.clock", Note: "result: UTC epoch ms", SQL: serverNowSQL}, 0},
	}
}

// probeSections are the row-lock probe's statements on goldenProbeTable.
func probeSections() []section {
	p := rowLockProbe(goldenProbeTable)
	return []section{
		{Op: "probe.create", Note: "", SQL: p.Create},
		{Op: "probe.insert", Note: "", SQL: p.Insert},
		{Op: "probe.lock", Note: "holder, in a transaction", SQL: p.Lock},
		{Op: "probe.skip_locked", Note: "", SQL: p.SkipLocked},
		{Op: "probe.nowait", Note: "", SQL: p.NoWait},
		{Op: "probe.drop", Note: "", SQL: p.Drop},
	}
}

// TestGoldenTableSQL pins every statement of every preset, of a
// schema-qualified table and of a writer time zone's table.
func TestGoldenTableSQL(t *testing.T) { oraliketest.GoldenTables(t, "app.job_locks", tableSections) }

// TestGoldenSessionSQL pins the detection, session-lock, listing, kill and
// probe statements.
func TestGoldenSessionSQL(t *testing.T) {
	var secs []section
	for _, s := range sessionSections() {
		checkPlaceholders(t, s.Op, s.SQL, s.binds)
		secs = append(secs, s.section)
	}
	checkGolden(t, "session.golden", locktabletest.RenderSections(append(secs, probeSections()...)))
}

// TestGoldenStatementsAreTheLockersOwn proves the golden files pin what the
// table locker really sends: its Statements() are the golden SQL.
func TestGoldenStatementsAreTheLockersOwn(t *testing.T) {
	sim := newSim(t, configDM8())
	db, _ := sim.Open(t)
	for _, preset := range dialects.Presets() {
		tl, err := NewTableLocker(db, dialects.Info{}, dialects.Table{Preset: preset})
		if err != nil {
			t.Fatal(err)
		}
		golden := parseGolden(t, preset+".golden")
		for op, sql := range tl.(*TableLocker).Statements() {
			if golden[op] != sql {
				t.Errorf("%s %s: the locker sends\n%s\nthe golden file has\n%s", preset, op, sql, golden[op])
			}
		}
		if golden["create"] != tl.CreateSQL() {
			t.Errorf("%s: CreateSQL differs from the golden create", preset)
		}
	}
}
