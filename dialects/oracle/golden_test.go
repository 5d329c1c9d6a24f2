package oracle

import (
	"regexp"
	"strconv"
	"testing"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/internal/oralike/oraliketest"
	"github.com/schedlock/schedlock/dialects/locktable/locktabletest"
)

// section is one statement of a golden file: "-- <op> (<note>)" and the
// SQL on the lines after it. Statements are written without a terminating
// ";" because that is how they are sent (a PL/SQL block ends in "END;" as
// part of its text).
type section = locktabletest.Section

var checkGolden = oraliketest.CheckGolden

// tableSections are every statement the table strategy sends for s.
func tableSections(t *testing.T, s dialects.Schema) []section {
	t.Helper()
	b := &Builder{}
	for _, op := range locktabletest.Ops(b, s) {
		checkPlaceholders(t, op.Name, op.Stmt.SQL, len(op.Stmt.Args))
	}
	return append(locktabletest.Sections(b, s), section{Op: "drop", SQL: b.Drop(s)})
}

var (
	quotedRE      = regexp.MustCompile(`'[^']*'`)
	placeholderRE = regexp.MustCompile(`:(\d+)`)
)

// checkPlaceholders proves sql uses :1 … :n once each, in that order, for n
// bound values: go-ora binds positionally, one value per occurrence.
func checkPlaceholders(t *testing.T, what, sql string, n int) {
	t.Helper()
	var got []int
	for _, m := range placeholderRE.FindAllStringSubmatch(quotedRE.ReplaceAllString(sql, "''"), -1) {
		i, _ := strconv.Atoi(m[1])
		got = append(got, i)
	}
	if len(got) != n {
		t.Errorf("%s: %d placeholders %v for %d values", what, len(got), got, n)
		return
	}
	for i, p := range got {
		if p != i+1 {
			t.Errorf("%s: placeholders %v are not :1 … :%d in order", what, got, n)
			return
		}
	}
}

// sessionSections are the session-strategy, detection, listing and kill
// statements.
func sessionSections() []section {
	return []section{
		{Op: "detect.version", Note: "result: p.*, session user", SQL: detectVersionSQL},
		{Op: "detect.banner", Note: "result: banner", SQL: detectBannerSQL},
		{Op: "detect.cloud", Note: "result: cloud service or ORA-02003", SQL: detectCloudSQL},
		{Op: "detect.dbms_lock", Note: "args: out mode", SQL: probeDBMSLockSQL},
		{Op: "session_user", Note: "result: user", SQL: currentUserSQL},
		{Op: "trylock", Note: "args: lock name, out return code", SQL: tryLockSQL},
		{Op: "lock", Note: "args: lock name, out return code, timeout in whole seconds", SQL: lockSQL},
		{Op: "unlock", Note: "args: lock name, out return code", SQL: unlockSQL},
		{Op: "holds", Note: "args: lock name, out return code", SQL: holdsSQL},
		{Op: "list", Note: "result: session locks", SQL: listSessionLocksSQL},
		{Op: "session_lock", Note: "args: lock name; result: its holder", SQL: sessionLockSQL},
		{Op: "kill", Note: "format: sid, serial#, instance", SQL: killSQL},
		{Op: "kill.check", Note: "args: sid, serial#, instance", SQL: sessionHoldsSQL},
		{Op: "lock_tables", Note: "args: the known table names in upper case, twice", SQL: lockTablesSQL},
		{Op: "probe.privileges", Note: "result: session user, ALTER SYSTEM, CREATE TABLE", SQL: privilegesSQL},
		{Op: "probe.listing", Note: "result: count", SQL: lockListingSQL},
		{Op: "probe.clock", Note: "result: UTC text", SQL: serverNowSQL},
	}
}

// probeSections are the row-lock probe's statements on goldenProbeTable.
func probeSections() []section {
	p := rowLockProbe(goldenProbeTable)
	return []section{
		{Op: "probe.create", Note: "", SQL: p.Create},
		{Op: "probe.insert", Note: "", SQL: p.Insert},
		{Op: "probe.begin", Note: "", SQL: p.Begin},
		{Op: "probe.lock", Note: "", SQL: p.Lock},
		{Op: "probe.skip_locked", Note: "", SQL: p.SkipLocked},
		{Op: "probe.nowait", Note: "", SQL: p.NoWait},
		{Op: "probe.drop", Note: "", SQL: p.Drop},
	}
}

// liquibaseSections are the Liquibase statements on its default table.
func liquibaseSections() []section {
	b := &Builder{}
	return []section{
		{Op: "inspect", Note: "result: locked, granted ms, locked by, now ms", SQL: b.LiquibaseInspect(dialects.LiquibaseTable)},
		{Op: "release", Note: "args: false, true, owner", SQL: b.LiquibaseRelease(dialects.LiquibaseTable, true)},
		{Op: "force_release", Note: "args: false, true", SQL: b.LiquibaseRelease(dialects.LiquibaseTable, false)},
	}
}

// TestGoldenTableSQL pins every statement of every preset, of a
// schema-qualified table and of a writer time zone's table.
func TestGoldenTableSQL(t *testing.T) {
	oraliketest.GoldenTables(t, "app_owner.job_locks", tableSections)
}

// TestGoldenSessionSQL pins the session-lock, detection, listing and kill
// statements.
func TestGoldenSessionSQL(t *testing.T) {
	for _, s := range sessionSections() {
		switch s.Op {
		case "detect.dbms_lock":
			checkPlaceholders(t, s.Op, s.SQL, 1)
		case "trylock", "unlock", "holds":
			checkPlaceholders(t, s.Op, s.SQL, 2)
		case "lock":
			checkPlaceholders(t, s.Op, s.SQL, 3)
		case "holder":
			checkPlaceholders(t, s.Op, s.SQL, 1)
		case "kill.check":
			checkPlaceholders(t, s.Op, s.SQL, 3)
		case "session_lock":
			checkPlaceholders(t, s.Op, s.SQL, 1)
		case "lock_tables":
			checkPlaceholders(t, s.Op, s.SQL, 2*len(dialects.KnownTables()))
		}
	}
	checkGolden(t, "session.golden", locktabletest.RenderSections(append(sessionSections(), probeSections()...)))
}

// TestGoldenLiquibaseSQL pins the statements that read and release
// Liquibase's lock.
func TestGoldenLiquibaseSQL(t *testing.T) {
	for _, s := range liquibaseSections() {
		want := map[string]int{"inspect": 0, "release": 3, "force_release": 2}[s.Op]
		checkPlaceholders(t, s.Op, s.SQL, want)
	}
	checkGolden(t, "liquibase.golden", locktabletest.RenderSections(liquibaseSections()))
}
