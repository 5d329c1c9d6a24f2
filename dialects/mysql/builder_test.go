package mysql

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
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

func presetSchema(t *testing.T, preset string) dialects.Schema {
	t.Helper()
	s, err := dialects.Table{Preset: preset}.Schema()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// renderStatements writes every statement of b for s in a reviewable form.
func renderStatements(t *testing.T, b *Builder, s dialects.Schema) string {
	t.Helper()
	var out strings.Builder
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
		if n := strings.Count(st.stmt.SQL, "?"); n != len(st.stmt.Args) {
			t.Errorf("%s: %d placeholders but %d arguments", st.op, n, len(st.stmt.Args))
		}
		args := make([]string, len(st.stmt.Args))
		for i, a := range st.stmt.Args {
			args[i] = argNames[a]
		}
		fmt.Fprintf(&out, "-- %s (result: %s; args: %s)\n%s;\n\n", st.op, resultNames[st.stmt.Result], strings.Join(args, ", "), st.stmt.SQL)
	}
	fmt.Fprintf(&out, "-- create (max name runes: %d)\n%s;\n", b.MaxNameRunes(s), b.Create(s))
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
		t.Errorf("%s differs from the builder's output (go test -update rewrites it)\n--- got:\n%s", path, got)
	}
}

func TestBuilderGolden(t *testing.T) {
	mariadb := NewBuilder(ParseVersion("10.11.19-MariaDB-0+deb12u1", ""))
	for _, preset := range dialects.Presets() {
		t.Run(preset, func(t *testing.T) {
			checkGolden(t, preset+".golden", renderStatements(t, mariadb, presetSchema(t, preset)))
		})
	}
	t.Run("renamed table", func(t *testing.T) {
		s, err := dialects.Table{Preset: dialects.PresetShedlock, Name: "ops.job_locks"}.Schema()
		if err != nil {
			t.Fatal(err)
		}
		checkGolden(t, "shedlock_renamed.golden", renderStatements(t, mariadb, s))
	})
}

func TestBuilderCollation(t *testing.T) {
	tests := []struct {
		banner, collation string
	}{
		{"10.11.19-MariaDB-0+deb12u1", "utf8mb4_nopad_bin"},
		{"10.2.2-MariaDB", "utf8mb4_nopad_bin"},
		{"10.1.48-MariaDB", "utf8mb4_bin"},
		{"8.0.36", "utf8mb4_0900_bin"},
		{"8.0.16", "utf8mb4_bin"},
		{"5.7.44", "utf8mb4_bin"},
		{"8.0.11-TiDB-v8.5.6", "utf8mb4_bin"},
	}
	for _, tt := range tests {
		b := NewBuilder(ParseVersion(tt.banner, ""))
		if b.Collation != tt.collation {
			t.Errorf("%s: collation %s, want %s", tt.banner, b.Collation, tt.collation)
		}
		if create := b.Create(presetSchema(t, dialects.PresetSchedlock)); !strings.Contains(create, "COLLATE "+tt.collation+" NOT NULL") {
			t.Errorf("%s: Create does not use %s:\n%s", tt.banner, tt.collation, create)
		}
	}
	checkGolden(t, "schedlock_mysql57.golden", NewBuilder(ParseVersion("5.7.44-log", "")).Create(presetSchema(t, dialects.PresetSchedlock))+";\n")
	checkGolden(t, "schedlock_mysql8.golden", NewBuilder(ParseVersion("8.0.36", "")).Create(presetSchema(t, dialects.PresetSchedlock))+";\n")
}

func TestBuilderMaxNameRunes(t *testing.T) {
	b := &Builder{}
	for preset, want := range map[string]int{dialects.PresetSchedlock: 255, dialects.PresetShedlock: 64, dialects.PresetSysSchedLock: 64} {
		if got := b.MaxNameRunes(presetSchema(t, preset)); got != want {
			t.Errorf("%s: MaxNameRunes = %d, want %d", preset, got, want)
		}
	}
}
