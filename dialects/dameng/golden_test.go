package dameng

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

// section is one statement of a golden file: "-- <op> (<note>)" and the
// SQL on the lines after it.
type section struct {
	op, note, sql string
}

// renderSections writes sections in the golden format, each statement as
// it is sent (a DMSQL block ends in "END;" as part of its text).
func renderSections(secs []section) string {
	var out strings.Builder
	for i, s := range secs {
		if i > 0 {
			out.WriteString("\n")
		}
		header := "-- " + s.op
		if s.note != "" {
			header += " (" + s.note + ")"
		}
		fmt.Fprintf(&out, "%s\n%s\n", header, s.sql)
	}
	return out.String()
}

// parseGolden reads a golden file back into op → SQL.
func parseGolden(t testing.TB, file string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	out := map[string]string{}
	var op string
	var body []string
	flush := func() {
		if op != "" {
			out[op] = strings.TrimRight(strings.Join(body, "\n"), "\n")
		}
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "-- ") {
			flush()
			op, _, _ = strings.Cut(strings.TrimPrefix(line, "-- "), " ")
			body = nil
			continue
		}
		body = append(body, line)
	}
	flush()
	return out
}

func checkGolden(t *testing.T, file, got string) {
	t.Helper()
	path := filepath.Join("testdata", file)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
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
		t.Errorf("%s differs from the generated SQL (run go test -update after reviewing):\n--- got\n%s\n--- want\n%s", file, got, want)
	}
}

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
	var secs []section
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
		checkPlaceholders(t, st.op, st.stmt.SQL, len(st.stmt.Args))
		args := make([]string, len(st.stmt.Args))
		for i, a := range st.stmt.Args {
			args[i] = argNames[a]
		}
		secs = append(secs, section{st.op, fmt.Sprintf("result: %s; args: %s", resultNames[st.stmt.Result], strings.Join(args, ", ")), st.stmt.SQL})
	}
	secs = append(secs,
		section{"create", fmt.Sprintf("max name runes: %d", b.MaxNameRunes(s)), b.Create(s)},
		section{"drop", "", b.Drop(s)},
		section{"columns", "reads no row", "SELECT * FROM " + s.Table + " WHERE 1 = 0"})
	return secs
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
		{section{"detect.version", "result: V$VERSION rows", detectVersionSQL}, 0},
		{section{"detect.mode", "result: COMPATIBLE_MODE", detectModeSQL}, 0},
		{section{"detect.dbms_lock", "result: count of SYS.DBMS_LOCK packages", probeDBMSLockSQL}, 0},
		{section{"trylock", "args: lock name, out return code", tryLockSQL}, 2},
		{section{"unlock", "args: lock name, out return code", unlockSQL}, 2},
		{section{"holds", "args: lock name, out return code", holdsSQL}, 2},
		{section{"holder", "args: lock name", holderSQL}, 1},
		{section{"list", "result: session locks", listSessionLocksSQL}, 0},
		{section{"kill", "args: session id", killSQL}, 1},
		{section{"kill.check", "args: session id", sessionAliveSQL}, 1},
		{section{"probe.privileges", "result: session user, DBA role, CREATE TABLE", privilegesSQL}, 0},
		{section{"probe.listing", "result: count", lockListingSQL}, 0},
		{section{"probe.views", "result: count", lockViewsSQL}, 0},
		{section{"probe.clock", "result: UTC epoch ms", serverNowSQL}, 0},
	}
}

// goldenProbeTable stands for the random name of the row-lock probe's
// table (dialects.ProbeTableName).
const goldenProbeTable = "schedlock_probe_0123456789ab"

// probeSections are the row-lock probe's statements on goldenProbeTable.
func probeSections() []section {
	p := rowLockProbe(goldenProbeTable)
	return []section{
		{"probe.create", "", p.Create},
		{"probe.insert", "", p.Insert},
		{"probe.lock", "holder, in a transaction", p.Lock},
		{"probe.skip_locked", "", p.SkipLocked},
		{"probe.nowait", "", p.NoWait},
		{"probe.drop", "", p.Drop},
	}
}

func presetSchema(t testing.TB, preset string) dialects.Schema {
	t.Helper()
	s, err := dialects.Table{Preset: preset}.Schema()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestGoldenTableSQL pins every statement of every preset.
func TestGoldenTableSQL(t *testing.T) {
	for _, preset := range dialects.Presets() {
		t.Run(preset, func(t *testing.T) {
			checkGolden(t, preset+".golden", renderSections(tableSections(t, presetSchema(t, preset))))
		})
	}
	t.Run("qualified", func(t *testing.T) {
		s, err := dialects.Table{Preset: dialects.PresetShedlock, Name: "app.job_locks"}.Schema()
		if err != nil {
			t.Fatal(err)
		}
		checkGolden(t, "qualified.golden", renderSections(tableSections(t, s)))
	})
}

// TestGoldenSessionSQL pins the detection, session-lock, listing, kill and
// probe statements.
func TestGoldenSessionSQL(t *testing.T) {
	var secs []section
	for _, s := range sessionSections() {
		checkPlaceholders(t, s.op, s.sql, s.binds)
		secs = append(secs, s.section)
	}
	checkGolden(t, "session.golden", renderSections(append(secs, probeSections()...)))
}

// TestGoldenStatementsAreTheLockersOwn proves the golden files pin what the
// table locker really sends: its Statements() are the golden SQL.
func TestGoldenStatementsAreTheLockersOwn(t *testing.T) {
	sim := newSim(t, configDM8())
	db, _ := sim.open(t)
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
