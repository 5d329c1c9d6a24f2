package sqlserver

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/locktable/locktabletest"
	"github.com/schedlock/schedlock/internal/golden"
)

var paramRE = regexp.MustCompile(`@p([0-9]+)`)

// highestParam is the largest n of the @pn in sql.
func highestParam(sql string) int {
	n := 0
	for _, m := range paramRE.FindAllStringSubmatch(sql, -1) {
		var v int
		fmt.Sscan(m[1], &v)
		n = max(n, v)
	}
	return n
}

// renderStatements writes every lease-table statement for s in a
// reviewable form, checking that each binds as many values as its
// highest @pn.
func renderStatements(t *testing.T, s dialects.Schema) string {
	t.Helper()
	b := Builder{}
	for _, op := range locktabletest.Ops(b, s) {
		if n := highestParam(op.Stmt.SQL); n != len(op.Stmt.Args) {
			t.Errorf("%s: highest parameter @p%d but %d arguments", op.Name, n, len(op.Stmt.Args))
		}
	}
	secs := locktabletest.Options{ParamPrefix: "@p"}.Sections(b, s)
	create := &secs[len(secs)-1]
	create.Note = fmt.Sprintf("name column: %d UTF-16 code units", b.MaxNameRunes(s))
	return locktabletest.RenderSections(append(secs, locktabletest.Section{Op: "drop", SQL: b.Drop(s)}))
}

func checkGolden(t *testing.T, file, got string) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", file), got)
}

func TestTableGolden(t *testing.T) {
	for _, preset := range dialects.Presets() {
		t.Run(preset, func(t *testing.T) {
			s, err := dialects.Table{Preset: preset}.Schema()
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, "table_"+preset+".golden", renderStatements(t, s))
		})
	}
	t.Run("renamed table", func(t *testing.T) {
		s, err := dialects.Table{Preset: dialects.PresetShedlock, Name: "ops.job_locks"}.Schema()
		if err != nil {
			t.Fatal(err)
		}
		checkGolden(t, "table_shedlock_renamed.golden", renderStatements(t, s))
	})
	t.Run("writer time zone", func(t *testing.T) {
		s, err := locktabletest.ZonedSchema(locktabletest.ZoneGoldenTable, locktabletest.ZoneGoldenAt)
		if err != nil {
			t.Fatal(err)
		}
		checkGolden(t, "table_shedlock_new_york.golden", renderStatements(t, s))
	})
}

// TestSessionGolden pins every statement of the session strategy,
// detection, listing, KILL and the probe.
func TestSessionGolden(t *testing.T) {
	var out strings.Builder
	for _, st := range []struct{ what, sql string }{
		{"detect", detectSQL},
		{"session try-lock (@p1 resource)", tryLockSQL},
		{"session wait (@p1 resource, @p2 timeout in ms)", lockSQL},
		{"session unlock (@p1 resource)", unlockSQL},
		{"session holds (@p1 resource)", holdsSQL},
		{"session lock test (@p1 resource)", lockTestSQL},
		{"list application locks", listSQL},
		{"lock tables", lockTablesSQL},
		{"kill (session id formatted from a validated integer)", "KILL 57"},
		{"principals", principalsSQL},
		{"rights (SQL Server, Managed Instance)", rightsSQL},
		{"rights (Azure SQL Database)", rightsAzureSQL},
		{"isolation", isolationSQL},
		{"server clock", nowSQLText},
	} {
		fmt.Fprintf(&out, "-- %s\n%s\n\n", st.what, st.sql)
	}
	for _, rcsi := range []bool{false, true} {
		p := rowLockProbe("schedlock_probe_0123456789ab", rcsi)
		fmt.Fprintf(&out, "-- row-lock probe (READ_COMMITTED_SNAPSHOT %v)\n", map[bool]string{false: "OFF", true: "ON"}[rcsi])
		for _, s := range []string{p.Create, p.Insert, p.Begin, p.Lock, p.SkipLocked, p.NoWait, p.Drop} {
			fmt.Fprintf(&out, "%s\n", s)
		}
		out.WriteString("\n")
	}
	checkGolden(t, "session.golden", out.String())
}

// TestLiquibaseGolden pins the statements that read and release
// Liquibase's lock.
func TestLiquibaseGolden(t *testing.T) {
	b := Builder{}
	var out strings.Builder
	for _, st := range []struct {
		what, sql string
		params    int
	}{
		{"inspect", b.LiquibaseInspect(dialects.LiquibaseTable), 0},
		{"release (@p1 false, @p2 true, @p3 owner)", b.LiquibaseRelease(dialects.LiquibaseTable, true), 3},
		{"force release (@p1 false, @p2 true)", b.LiquibaseRelease(dialects.LiquibaseTable, false), 2},
	} {
		if n := highestParam(st.sql); n != st.params {
			t.Errorf("%s: highest parameter @p%d, want @p%d", st.what, n, st.params)
		}
		fmt.Fprintf(&out, "-- %s\n%s\n\n", st.what, st.sql)
	}
	checkGolden(t, "liquibase.golden", out.String())
}
