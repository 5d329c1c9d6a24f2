package sqlite_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/locktable"
	"github.com/schedlock/schedlock/dialects/locktable/locktabletest"
	"github.com/schedlock/schedlock/dialects/sqlite"
	"github.com/schedlock/schedlock/internal/golden"
)

// resultNames are this package's spelling of result kinds in its golden
// files.
var resultNames = map[locktable.Result]string{
	locktable.ResultRow:          "row",
	locktable.ResultInsertID:     "insert id",
	locktable.ResultRowsAffected: "rows affected",
}

// renderStatements writes every statement the builder makes for t, with
// its arguments and result kind, in a stable order.
func renderStatements(t *testing.T, table dialects.Table) string {
	t.Helper()
	s, err := locktabletest.ZonedSchema(table, locktabletest.ZoneGoldenAt)
	if err != nil {
		t.Fatal(err)
	}
	b := sqlite.Builder{}
	var out strings.Builder
	fmt.Fprintf(&out, "# dialect %s, preset %s, table %s, names up to %d characters\n", b.Dialect(), s.Preset, s.Table, b.MaxNameRunes(s))
	for _, op := range append(locktabletest.Ops(b, s), locktabletest.PresetOps(b, s)...) {
		args := make([]string, len(op.Stmt.Args))
		for i, a := range op.Stmt.Args {
			args[i] = locktabletest.ArgName(a)
		}
		if got, want := strings.Count(op.Stmt.SQL, "?"), len(args); got != want {
			t.Errorf("%s: %d placeholders, %d arguments", op.Name, got, want)
		}
		argList := strings.Join(args, ", ")
		if argList == "" {
			argList = "none"
		}
		result := "; result: " + resultNames[op.Stmt.Result]
		if op.Name == "inspect" || op.Name == "list" {
			result = "" // queries: the engine reads their rows
		}
		fmt.Fprintf(&out, "\n-- %s (args: %s%s)\n%s\n", op.Name, argList, result, op.Stmt.SQL)
	}
	fmt.Fprintf(&out, "\n-- name-column\n%s\n", b.NameColumn(s))
	fmt.Fprintf(&out, "\n-- create\n%s\n", b.Create(s))
	return out.String()
}

func TestGoldenSQL(t *testing.T) {
	cases := map[string]dialects.Table{
		"schedlock":      {Preset: dialects.PresetSchedlock},
		"shedlock":       {Preset: dialects.PresetShedlock},
		"sys_sched_lock": {Preset: dialects.PresetSysSchedLock},
		"qualified":      {Preset: dialects.PresetSchedlock, Name: "ops.job_locks"},
		"qualified_sys":  {Preset: dialects.PresetSysSchedLock, Name: "ops.job_locks"},
		// ShedLock's table written by a JVM in New York, around a change of offset.
		"shedlock_new_york": locktabletest.ZoneGoldenTable,
	}
	for name, table := range cases {
		t.Run(name, func(t *testing.T) {
			got := renderStatements(t, table)
			golden.Check(t, filepath.Join("testdata", name+".golden"), got)
		})
	}
}
