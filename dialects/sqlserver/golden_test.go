package sqlserver

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/locktable"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

var argNames = map[locktable.Arg]string{
	locktable.ArgName:      "name",
	locktable.ArgOwner:     "owner",
	locktable.ArgToken:     "token",
	locktable.ArgAtMostMs:  "at_most_ms",
	locktable.ArgAtLeastMs: "at_least_ms",
}

var resultNames = map[locktable.Result]string{
	locktable.ResultRow:          "row",
	locktable.ResultInsertID:     "insert_id",
	locktable.ResultRowsAffected: "rows_affected",
}

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
	var out strings.Builder
	for _, st := range []struct {
		op   string
		stmt locktable.Stmt
	}{
		{"acquire", b.Acquire(s)},
		{"refresh", b.Refresh(s)},
		{"release", b.Release(s)},
		{"expire", b.Expire(s)},
		{"inspect", b.Inspect(s)},
		{"list", b.List(s)},
	} {
		if n := highestParam(st.stmt.SQL); n != len(st.stmt.Args) {
			t.Errorf("%s: highest parameter @p%d but %d arguments", st.op, n, len(st.stmt.Args))
		}
		args := make([]string, len(st.stmt.Args))
		for i, a := range st.stmt.Args {
			args[i] = fmt.Sprintf("@p%d %s", i+1, argNames[a])
		}
		fmt.Fprintf(&out, "-- %s (result: %s; args: %s)\n%s\n\n", st.op, resultNames[st.stmt.Result], strings.Join(args, ", "), st.stmt.SQL)
	}
	fmt.Fprintf(&out, "-- create (name column: %d UTF-16 code units)\n%s\n\n", b.MaxNameRunes(s), b.Create(s))
	fmt.Fprintf(&out, "-- drop\n%s\n", b.Drop(s))
	return out.String()
}

func checkGolden(t *testing.T, file, got string) {
	t.Helper()
	path := filepath.Join("testdata", file)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the current SQL (go test -update rewrites it)\n--- got:\n%s", path, got)
	}
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
}

// TestSessionGolden pins every statement of the session strategy,
// detection, listing, KILL and the probe.
func TestSessionGolden(t *testing.T) {
	var out strings.Builder
	for _, st := range []struct{ what, sql string }{
		{"detect", detectSQL},
		{"session try-lock (@p1 resource)", tryLockSQL},
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
		info := dialects.Info{}
		if rcsi {
			info.Mode = ModeReadCommittedSnapshot
		}
		p := rowLockProbe("schedlock_probe_0123456789ab", info)
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
