package mysql

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/locktable/locktabletest"
	"github.com/schedlock/schedlock/internal/golden"
)

func presetSchema(t *testing.T, preset string) dialects.Schema {
	t.Helper()
	s, err := dialects.Table{Preset: preset}.Schema()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// renderStatements writes every statement of b for s in a reviewable
// form, each ended by ";", checking that each binds one value per "?".
func renderStatements(t *testing.T, b *Builder, s dialects.Schema) string {
	t.Helper()
	for _, op := range locktabletest.Ops(b, s) {
		if n := strings.Count(op.Stmt.SQL, "?"); n != len(op.Stmt.Args) {
			t.Errorf("%s: %d placeholders but %d arguments", op.Name, n, len(op.Stmt.Args))
		}
	}
	secs := locktabletest.Sections(b, s)
	for i := range secs {
		secs[i].SQL += ";"
	}
	return locktabletest.RenderSections(secs)
}

func checkGolden(t *testing.T, file, got string) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", file), got)
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
	t.Run("whole-second lease end", func(t *testing.T) {
		s := presetSchema(t, dialects.PresetSysSchedLock)
		s.UntilWholeSeconds = true
		checkGolden(t, "sys_sched_lock_whole_seconds.golden", renderStatements(t, mariadb, s))
	})
	t.Run("writer time zone", func(t *testing.T) {
		s, err := locktabletest.ZonedSchema(locktabletest.ZoneGoldenTable, locktabletest.ZoneGoldenAt)
		if err != nil {
			t.Fatal(err)
		}
		checkGolden(t, "shedlock_new_york.golden", renderStatements(t, mariadb, s))
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
	for preset, want := range map[string]int{dialects.PresetSchedlock: 255, dialects.PresetShedlock: 64, dialects.PresetSysSchedLock: 128} {
		if got := b.MaxNameRunes(presetSchema(t, preset)); got != want {
			t.Errorf("%s: MaxNameRunes = %d, want %d", preset, got, want)
		}
	}
}
