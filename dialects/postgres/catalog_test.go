package postgres

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/locktable"
	"github.com/schedlock/schedlock/internal/golden"
)

// sysCatalog is KingbaseES with only the sys_ names.
var sysCatalog = Catalog{
	Locks:      "sys_locks",
	Activity:   "sys_stat_activity",
	Database:   "sys_database",
	BackendPID: "sys_backend_pid",
	TryLock:    "sys_try_advisory_lock",
	Unlock:     "sys_advisory_unlock",
	Terminate:  "sys_terminate_backend",
}

// goldenSection is one statement of a sectioned golden file: "-- <op>"
// and the SQL on the lines after it.
type goldenSection struct{ op, sql string }

func renderSections(secs []goldenSection) string {
	var b strings.Builder
	for i, s := range secs {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "-- %s\n%s\n", s.op, s.sql)
	}
	return b.String()
}

// parseSections reads a sectioned golden file into op → SQL, in order.
func parseSections(t testing.TB, file string) []goldenSection {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	var out []goldenSection
	for _, block := range strings.Split(strings.TrimRight(string(data), "\n"), "\n\n-- ") {
		block = strings.TrimPrefix(block, "-- ")
		op, sql, _ := strings.Cut(block, "\n")
		out = append(out, goldenSection{op: op, sql: sql})
	}
	return out
}

func checkGolden(t *testing.T, file, got string) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", file), got)
}

func sessionSections(c Catalog) []goldenSection {
	return []goldenSection{
		{"trylock", c.tryLockSQL()},
		{"unlock", c.unlockSQL()},
		{"holds", c.holdsSQL()},
		{"terminate", c.terminateSQL()},
		{"alive", c.aliveSQL()},
		{"lock", c.lockSQL()},
		{"guard", guardSQL},
		{"guard-all", guardAllSQL(5)},
	}
}

// TestSessionGolden pins the session-lock statements for the PostgreSQL
// names and for a KingbaseES with only the sys_ names.
func TestSessionGolden(t *testing.T) {
	checkGolden(t, "session.golden", renderSections(sessionSections(PostgresCatalog)))
	checkGolden(t, "session.sys.golden", renderSections(sessionSections(sysCatalog)))
}

// TestKingbaseDetectGolden pins the statements of KingbaseES detection:
// the mode probe and every catalog probe, in the order they are sent.
func TestKingbaseDetectGolden(t *testing.T) {
	secs := []goldenSection{{"mode", showModeSQL}, {"mode-setting", settingModeSQL}}
	for _, e := range catalogEntries {
		for _, name := range []string{e.pg, e.sys} {
			secs = append(secs, goldenSection{"exists " + name, fmt.Sprintf(e.probe, name)})
		}
	}
	checkGolden(t, "kingbase.detect.golden", renderSections(secs))
}

func TestSessionGoldenRoundTrips(t *testing.T) {
	if golden.Updating() {
		t.Skip("golden files are being rewritten")
	}
	got := parseSections(t, "session.golden")
	want := sessionSections(PostgresCatalog)
	if len(got) != len(want) {
		t.Fatalf("session.golden has %d statements, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("statement %d: parsed %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestCatalogMissing(t *testing.T) {
	if err := PostgresCatalog.errMissing(); err != nil {
		t.Errorf("PostgresCatalog lacks names: %v", err)
	}
	c := sysCatalog
	c.TryLock, c.Terminate, c.Activity = "", "", ""
	err := c.errMissing()
	if err == nil || !strings.Contains(err.Error(), "pg_try_advisory_lock or sys_try_advisory_lock") {
		t.Errorf("errMissing = %v; want it to name the missing lock function", err)
	}
	if strings.Contains(err.Error(), "terminate") || strings.Contains(err.Error(), "stat_activity") {
		t.Errorf("errMissing = %v; kill and activity are not needed for session locks", err)
	}
}

func TestNormalizeMode(t *testing.T) {
	for in, want := range map[string]string{
		"pg": ModePG, "PostgreSQL": ModePG, " postgres ": ModePG, "ORACLE": ModeOracle, "ora": ModeOracle,
		"MySQL": ModeMySQL, "mssql": ModeSQLServer, "sqlserver": ModeSQLServer, "": "", "Teradata": "teradata",
	} {
		if got := NormalizeMode(in); got != want {
			t.Errorf("NormalizeMode(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestOpenGaussBuilderGolden pins openGauss's acquire statement for every
// preset; its other statements are Builder's, pinned by TestBuilderGolden.
func TestOpenGaussBuilderGolden(t *testing.T) {
	for _, preset := range dialects.Presets() {
		s, err := dialects.Table{Preset: preset}.Schema()
		if err != nil {
			t.Fatal(err)
		}
		b := OpenGaussBuilder{}
		checkGolden(t, "opengauss."+preset+".acquire.golden", renderStmt(b.Acquire(s)))
		for op, pair := range map[string][2]locktable.Stmt{
			"refresh": {b.Refresh(s), Builder{}.Refresh(s)},
			"release": {b.Release(s), Builder{}.Release(s)},
			"expire":  {b.Expire(s), Builder{}.Expire(s)},
			"inspect": {b.Inspect(s), Builder{}.Inspect(s)},
			"list":    {b.List(s), Builder{}.List(s)},
		} {
			if renderStmt(pair[0]) != renderStmt(pair[1]) {
				t.Errorf("openGauss %s %s differs from PostgreSQL's", preset, op)
			}
		}
		if strings.Contains(b.Acquire(s).SQL, "ON CONFLICT") || strings.Contains(b.Acquire(s).SQL, "RETURNING") {
			t.Errorf("openGauss acquire uses ON CONFLICT or RETURNING:\n%s", b.Acquire(s).SQL)
		}
	}
}

func TestNewBuilder(t *testing.T) {
	if _, ok := NewBuilder(ParseBanner("(openGauss 5.0.0 build a07d57c3) compiled at …")).(OpenGaussBuilder); !ok {
		t.Error("openGauss does not get OpenGaussBuilder")
	}
	for _, banner := range []string{"PostgreSQL 15.20 on x", "KingbaseES V008R006C007B0024 on x", "CockroachDB CCL v24.3.0 (x)"} {
		if _, ok := NewBuilder(ParseBanner(banner)).(Builder); !ok {
			t.Errorf("%s does not get Builder", banner)
		}
	}
}
