package oracle

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
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

// renderSections writes sections in the golden format. Statements are
// written without a terminating ";" because that is how they are sent
// (a PL/SQL block ends in "END;" as part of its text).
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
		section{"drop", "", b.Drop(s)})
	return secs
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
		{"detect.version", "result: p.*, session user", detectVersionSQL},
		{"detect.banner", "result: banner", detectBannerSQL},
		{"detect.cloud", "result: cloud service or ORA-02003", detectCloudSQL},
		{"detect.dbms_lock", "args: out mode", probeDBMSLockSQL},
		{"session_user", "result: user", currentUserSQL},
		{"trylock", "args: lock name, out return code", tryLockSQL},
		{"unlock", "args: lock name, out return code", unlockSQL},
		{"holds", "args: lock name, out return code", holdsSQL},
		{"holder", "args: lock name", holderSQL},
		{"list", "result: session locks", listSessionLocksSQL},
		{"session_lock", "args: lock name; result: its holder", sessionLockSQL},
		{"kill", "format: sid, serial#, instance", killSQL},
		{"kill.check", "args: sid, serial#, instance", sessionHoldsSQL},
		{"lock_tables", "args: the known table names in upper case, twice", lockTablesSQL},
		{"probe.privileges", "result: session user, ALTER SYSTEM, CREATE TABLE", privilegesSQL},
		{"probe.listing", "result: count", lockListingSQL},
		{"probe.clock", "result: UTC text", serverNowSQL},
	}
}

// goldenProbeTable stands for the random name of the row-lock probe's
// table in the golden file.
const goldenProbeTable = "schedlock_probe_0123456789ab"

// probeSections are the row-lock probe's statements on goldenProbeTable.
func probeSections() []section {
	p := rowLockProbe(goldenProbeTable)
	return []section{
		{"probe.create", "", p.Create},
		{"probe.insert", "", p.Insert},
		{"probe.begin", "", p.Begin},
		{"probe.lock", "", p.Lock},
		{"probe.skip_locked", "", p.SkipLocked},
		{"probe.nowait", "", p.NoWait},
		{"probe.drop", "", p.Drop},
	}
}

// liquibaseSections are the Liquibase statements on its default table.
func liquibaseSections() []section {
	b := &Builder{}
	return []section{
		{"inspect", "result: locked, granted ms, locked by, now ms", b.LiquibaseInspect(dialects.LiquibaseTable)},
		{"release", "args: false, true, owner", b.LiquibaseRelease(dialects.LiquibaseTable, true)},
		{"force_release", "args: false, true", b.LiquibaseRelease(dialects.LiquibaseTable, false)},
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
		s, err := dialects.Table{Preset: dialects.PresetShedlock, Name: "app_owner.job_locks"}.Schema()
		if err != nil {
			t.Fatal(err)
		}
		checkGolden(t, "qualified.golden", renderSections(tableSections(t, s)))
	})
}

// TestGoldenSessionSQL pins the session-lock, detection, listing and kill
// statements.
func TestGoldenSessionSQL(t *testing.T) {
	for _, s := range sessionSections() {
		switch s.op {
		case "detect.dbms_lock":
			checkPlaceholders(t, s.op, s.sql, 1)
		case "trylock", "unlock", "holds":
			checkPlaceholders(t, s.op, s.sql, 2)
		case "holder":
			checkPlaceholders(t, s.op, s.sql, 1)
		case "kill.check":
			checkPlaceholders(t, s.op, s.sql, 3)
		case "session_lock":
			checkPlaceholders(t, s.op, s.sql, 1)
		case "lock_tables":
			checkPlaceholders(t, s.op, s.sql, 2*len(dialects.KnownTables()))
		}
	}
	checkGolden(t, "session.golden", renderSections(append(sessionSections(), probeSections()...)))
}

// TestGoldenLiquibaseSQL pins the statements that read and release
// Liquibase's lock.
func TestGoldenLiquibaseSQL(t *testing.T) {
	for _, s := range liquibaseSections() {
		want := map[string]int{"inspect": 0, "release": 3, "force_release": 2}[s.op]
		checkPlaceholders(t, s.op, s.sql, want)
	}
	checkGolden(t, "liquibase.golden", renderSections(liquibaseSections()))
}
