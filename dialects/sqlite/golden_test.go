package sqlite_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/locktable"
	"github.com/schedlock/schedlock/dialects/sqlite"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the builder")

var argNames = map[locktable.Arg]string{
	locktable.ArgName:      "name",
	locktable.ArgOwner:     "owner",
	locktable.ArgToken:     "token",
	locktable.ArgAtMostMs:  "at_most_ms",
	locktable.ArgAtLeastMs: "at_least_ms",
}

var resultNames = map[locktable.Result]string{
	locktable.ResultRow:          "row",
	locktable.ResultInsertID:     "insert id",
	locktable.ResultRowsAffected: "rows affected",
}

// renderStatements writes every statement the builder makes for t, with
// its arguments and result kind, in a stable order.
func renderStatements(t *testing.T, table dialects.Table) string {
	t.Helper()
	s, err := table.Schema()
	if err != nil {
		t.Fatal(err)
	}
	b := sqlite.Builder{}
	var out strings.Builder
	fmt.Fprintf(&out, "# dialect %s, preset %s, table %s, names up to %d characters\n", b.Dialect(), s.Preset, s.Table, b.MaxNameRunes(s))
	stmts := []struct {
		op   string
		stmt locktable.Stmt
	}{
		{"acquire", b.Acquire(s)},
		{"refresh", b.Refresh(s)},
		{"release", b.Release(s)},
		{"expire", b.Expire(s)},
		{"inspect", b.Inspect(s)},
		{"list", b.List(s)},
	}
	for _, st := range stmts {
		args := make([]string, len(st.stmt.Args))
		for i, a := range st.stmt.Args {
			args[i] = argNames[a]
		}
		if got, want := strings.Count(st.stmt.SQL, "?"), len(args); got != want {
			t.Errorf("%s: %d placeholders, %d arguments", st.op, got, want)
		}
		argList := strings.Join(args, ", ")
		if argList == "" {
			argList = "none"
		}
		result := "; result: " + resultNames[st.stmt.Result]
		if st.op == "inspect" || st.op == "list" {
			result = "" // queries: the engine reads their rows
		}
		fmt.Fprintf(&out, "\n-- %s (args: %s%s)\n%s\n", st.op, argList, result, st.stmt.SQL)
	}
	fmt.Fprintf(&out, "\n-- create\n%s\n", b.Create(s))
	return out.String()
}

func TestGoldenSQL(t *testing.T) {
	cases := map[string]dialects.Table{
		"schedlock":      {Preset: dialects.PresetSchedlock},
		"shedlock":       {Preset: dialects.PresetShedlock},
		"sys_sched_lock": {Preset: dialects.PresetSysSchedLock},
		"qualified":      {Preset: dialects.PresetSchedlock, Name: "ops.job_locks"},
	}
	for name, table := range cases {
		t.Run(name, func(t *testing.T) {
			got := renderStatements(t, table)
			path := filepath.Join("testdata", name+".golden")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -run TestGoldenSQL -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("SQL differs from %s (rerun with -update if the change is intended):\n--- got\n%s\n--- want\n%s", path, got, want)
			}
		})
	}
}
