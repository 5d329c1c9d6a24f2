package cmd

import (
	"context"
	"encoding/json"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/schedlock/schedlock/internal/benchkit"
	"github.com/schedlock/schedlock/internal/dsn"
	"github.com/schedlock/schedlock/internal/livetest"
)

// benchReportKeys are the top-level fields of `bench -o json`, in order.
var benchReportKeys = []string{"target", "database", "dialect", "duration_seconds", "cycles_per_measurement", "round_trip", "cycles", "contention", "held_locks", "leases", "hand_over", "notes"}

func TestBenchBadInput(t *testing.T) {
	sqlite := emptySQLiteFile(t, "bench.db")
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"negative workers", []string{"--workers", "-1"}, "--workers must be between 1 and"},
		{"zero workers", []string{"--workers", "0"}, "--workers must be between 1 and"},
		{"too many workers", []string{"--workers", "5000"}, "--workers must be between 1 and"},
		{"zero locks", []string{"--locks", "0"}, "--locks must be between 1 and"},
		{"negative locks", []string{"--locks", "-3"}, "--locks must be between 1 and"},
		{"locks on the table strategy", []string{"--strategy", "table", "--locks", "10"}, "--locks measures session locks"},
		{"unknown strategy", []string{"--strategy", "advisory"}, `unknown strategy "advisory": use session, table or all`},
		{"zero duration", []string{"--duration", "0s"}, "--duration must be positive"},
		{"negative duration", []string{"--duration", "-1s"}, "--duration must be positive"},
		{"zero cycles", []string{"--cycles", "0"}, "--cycles must be at least 1"},
		{"duration and cycles", []string{"--duration", "1s", "--cycles", "5"}, "give --duration or --cycles, not both"},
		{"preset with session", []string{"--strategy", "session", "--preset", "shedlock"}, "--table and --preset apply to the table strategy"},
		{"unknown preset", []string{"--preset", "quartz"}, `unknown preset "quartz"`},
		{"bad table name", []string{"--table", "x;drop"}, "is not a plain identifier"},
		{"junit output", []string{"-o", "junit"}, `unknown output format "junit"`},
		{"an argument", []string{"extra"}, "unknown command"},
		{"not a number", []string{"--workers", "many"}, "invalid argument"},
		{"zero leases", []string{"--leases", "0"}, "--leases must be between 1 and"},
		{"negative leases", []string{"--leases", "-5"}, "--leases must be between 1 and"},
		{"leases on the session strategy", []string{"--strategy", "session", "--leases", "10"}, "--leases holds table leases"},
		{"more leases than one handle renews", []string{"--leases", "200001"}, "--leases 200001 is above what sqlite can hold: at most 200000 (one handle renews at most 20000 leases a second"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := runCmd(t, false, nil, append([]string{"bench", "--dsn", sqlite}, tc.args...)...)
			assertBenchUsage(t, r, tc.want)
		})
	}
	t.Run("no database", func(t *testing.T) {
		assertBenchUsage(t, runCmd(t, false, nil, "bench"), "no database given")
	})
	t.Run("locks on a database without session locks", func(t *testing.T) {
		assertBenchUsage(t, runCmd(t, false, nil, "bench", "--dsn", sqlite, "--locks", "5"), "sqlite has no session locks to hold at once")
	})
	t.Run("session strategy on a database without session locks", func(t *testing.T) {
		assertBenchUsage(t, runCmd(t, false, nil, "bench", "--dsn", sqlite, "--strategy", "session", "--cycles", "1"), "no session locks")
	})
}

// assertBenchUsage checks that r is a usage error (exit 2) of one line
// containing want, with nothing on stdout.
func assertBenchUsage(t *testing.T, r result, want string) {
	t.Helper()
	if code := ExitCode(r.err); code != CodeUsage {
		t.Fatalf("exit %d (%v), want %d", code, r.err, CodeUsage)
	}
	msg := r.err.Error()
	if !strings.Contains(msg, want) || strings.Contains(msg, "\n") {
		t.Errorf("error %q: want one line containing %q", msg, want)
	}
	if r.stdout != "" {
		t.Errorf("stdout %q, want nothing", r.stdout)
	}
}

func TestBenchHelp(t *testing.T) {
	r := runCmd(t, false, nil, "bench", "--help")
	if r.err != nil {
		t.Fatal(r.err)
	}
	for _, want := range []string{"Examples:", "--workers 8", "--locks 1000", "--wait --cycles 200 -o json", "Exit codes:", "docs/bench.md"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("help lacks %q", want)
		}
	}
}

func TestBenchCompletesFlagValues(t *testing.T) {
	for flag, want := range map[string][]string{
		"--strategy": {"session", "table", "all"},
		"-o":         {"table", "json", "yaml"},
		"--preset":   {"schedlock", "shedlock"},
	} {
		r := runCmd(t, false, nil, "__complete", "bench", flag, "")
		if r.err != nil {
			t.Fatal(r.err)
		}
		for _, w := range want {
			if !strings.Contains(r.stdout, w+"\n") {
				t.Errorf("completion of %s lacks %q:\n%s", flag, w, r.stdout)
			}
		}
		if flag == "-o" && strings.Contains(r.stdout, "junit") {
			t.Errorf("bench does not write junit, yet -o completes it:\n%s", r.stdout)
		}
	}
	if r := runCmd(t, false, nil, "__complete", "selfcheck", "-o", ""); !strings.Contains(r.stdout, "junit\n") {
		t.Errorf("selfcheck -o completion lacks junit:\n%s", r.stdout)
	}
}

// benchJSON runs `bench -o json` with args and decodes the report, after
// checking the exit code, the field names and that stderr stayed empty
// (no progress when piped).
func benchJSON(t *testing.T, dsn string, args ...string) benchkit.Report {
	t.Helper()
	r := runCmd(t, false, nil, append([]string{"bench", "--dsn", dsn, "-o", "json"}, args...)...)
	if r.err != nil {
		t.Fatalf("bench %v: %v\n%s", args, r.err, r.stderr)
	}
	if r.stderr != "" {
		t.Errorf("stderr %q: want nothing when piped", r.stderr)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal([]byte(r.stdout), &fields); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, r.stdout)
	}
	for _, k := range benchReportKeys {
		if _, ok := fields[k]; !ok {
			t.Errorf("JSON lacks %q", k)
		}
	}
	if len(fields) != len(benchReportKeys) {
		t.Errorf("JSON has %d fields, want the %d documented ones", len(fields), len(benchReportKeys))
	}
	var rep benchkit.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Target == "" || rep.Database == "" || rep.Dialect == "" {
		t.Errorf("target %q database %q dialect %q: want all set", rep.Target, rep.Database, rep.Dialect)
	}
	return rep
}

// checkCycles asserts a lock-cycle report: a round trip and one engine
// figure per strategy, the raw statements beside session locks.
func checkCycles(t *testing.T, rep benchkit.Report, cycles int64, strategies ...string) {
	t.Helper()
	if rep.CyclesPerMeasurement == nil || *rep.CyclesPerMeasurement != cycles || rep.DurationSeconds != nil {
		t.Errorf("cycles_per_measurement %v duration_seconds %v, want %d and null", rep.CyclesPerMeasurement, rep.DurationSeconds, cycles)
	}
	if rep.RoundTrip == nil || rep.RoundTrip.Cycles != cycles || rep.RoundTrip.CyclesPerSecond <= 0 || rep.RoundTrip.Statement == "" {
		t.Fatalf("round_trip %+v, want %d cycles at a positive rate", rep.RoundTrip, cycles)
	}
	if len(rep.Cycles) != len(strategies) {
		t.Fatalf("cycles %+v, want one per strategy %v", rep.Cycles, strategies)
	}
	for i, c := range rep.Cycles {
		if c.Strategy != strategies[i] || c.Engine.Cycles != cycles || c.Engine.CyclesPerSecond <= 0 || c.Engine.Seconds <= 0 {
			t.Errorf("cycles[%d] = %+v, want %s with %d engine cycles", i, c, strategies[i], cycles)
		}
		if c.LimitCyclesPerSecond <= 0 || c.EngineToLimit == nil || *c.EngineToLimit <= 0 {
			t.Errorf("cycles[%d]: limit %v, engine_to_limit %v", i, c.LimitCyclesPerSecond, c.EngineToLimit)
		}
		if c.Strategy == "session" && (c.Raw == nil || c.Raw.Cycles != cycles || c.Raw.CyclesPerSecond <= 0 || c.EngineToRaw == nil) {
			t.Errorf("session cycles: raw %+v engine_to_raw %v, want the raw statements measured", c.Raw, c.EngineToRaw)
		}
		if c.Strategy == "table" && (c.Raw != nil || c.EngineToRaw != nil) {
			t.Errorf("table cycles: raw %+v, want null", c.Raw)
		}
	}
}

// checkContention asserts a contention report per strategy.
func checkContention(t *testing.T, rep benchkit.Report, workers int, strategies ...string) {
	t.Helper()
	if len(rep.Contention) != len(strategies) {
		t.Fatalf("contention %+v, want one per strategy %v", rep.Contention, strategies)
	}
	for i, c := range rep.Contention {
		if c.Strategy != strategies[i] || c.Workers != workers {
			t.Errorf("contention[%d] = %s with %d workers", i, c.Strategy, c.Workers)
		}
		if c.Engine.Successes <= 0 || c.Engine.SuccessesPerSecond <= 0 || c.Engine.Refusals < 0 {
			t.Errorf("contention[%d].engine = %+v, want successes", i, c.Engine)
		}
		if c.EngineWaiting.Successes <= 0 {
			t.Errorf("contention[%d].engine_waiting = %+v, want successes", i, c.EngineWaiting)
		}
		if c.Strategy == "session" && (c.Raw == nil || c.Raw.Successes <= 0 || c.EngineToRaw == nil) {
			t.Errorf("session contention: raw %+v, want measured", c.Raw)
		}
	}
}

// checkHandOver asserts ordered latencies over n hand-overs per strategy.
func checkHandOver(t *testing.T, rep benchkit.Report, n int, strategies ...string) {
	t.Helper()
	if len(rep.HandOver) != len(strategies) {
		t.Fatalf("hand_over %+v, want one per strategy %v", rep.HandOver, strategies)
	}
	for i, h := range rep.HandOver {
		if h.Strategy != strategies[i] || h.HandOvers != n {
			t.Errorf("hand_over[%d] = %+v, want %s with %d hand-overs", i, h, strategies[i], n)
		}
		if !(h.MinMS <= h.MedianMS && h.MedianMS <= h.P90MS && h.P90MS <= h.P99MS && h.P99MS <= h.MaxMS && h.MinMS <= h.MeanMS && h.MeanMS <= h.MaxMS && h.MaxMS > 0) {
			t.Errorf("hand_over[%d] latencies out of order: %+v", i, h)
		}
	}
}

func TestBenchLiveSQLite(t *testing.T) {
	dsn := emptySQLiteFile(t, "bench.db")
	rep := benchJSON(t, dsn, "--cycles", "20")
	checkCycles(t, rep, 20, "table")
	if len(rep.Notes) != 1 || !strings.Contains(rep.Notes[0], "session strategy skipped") {
		t.Errorf("notes %q, want the skipped session strategy", rep.Notes)
	}
	rep = benchJSON(t, dsn, "--workers", "3", "--cycles", "10", "--wait")
	checkContention(t, rep, 3, "table")
	checkHandOver(t, rep, 10, "table")
	if rep.RoundTrip != nil || len(rep.Cycles) != 0 || rep.HeldLocks != nil {
		t.Errorf("--workers --wait also measured cycles or held locks: %+v", rep)
	}
	assertNoBenchTables(t, dsn)

	rep = benchJSON(t, dsn, "--leases", "40", "--duration", "1s")
	l := rep.Leases
	if l == nil || l.Leases != 40 || l.Acquired != 40 || l.Held != 40 || l.Lost != 0 || l.Error != nil {
		t.Fatalf("--leases 40: %+v, want 40 taken and held, none lost", l)
	}
	if l.MaxConnections == nil || l.ConnectionLimit == nil || *l.MaxConnections < 1 || *l.MaxConnections > *l.ConnectionLimit {
		t.Errorf("--leases 40: connections %v of limit %v, want at least one and within the limit", l.MaxConnections, l.ConnectionLimit)
	}
	if l.RefreshStatements == nil || l.AtMostSeconds != 30 || l.HoldSeconds != 1 {
		t.Errorf("--leases 40: %+v, want counted refresh statements, 30 s leases held 1 s", l)
	}
	if rep.RoundTrip != nil || len(rep.Cycles) != 0 {
		t.Errorf("--leases also measured cycles: %+v", rep)
	}
	assertNoBenchTables(t, dsn)
}

// assertNoBenchTables checks that bench dropped its temporary tables from
// the SQLite file.
func assertNoBenchTables(t *testing.T, path string) {
	t.Helper()
	d, err := dsn.Parse(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	db, err := sqlBackend(d.Connect(ctx))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var tables int
	if err := db.SQL.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table'`).Scan(&tables); err != nil {
		t.Fatal(err)
	}
	if tables != 0 {
		t.Errorf("bench left %d tables in %s, want its temporary ones dropped", tables, path)
	}
}

// liveBench runs the whole bench suite on the server of env, whose
// password (any: trust authentication) must never be shown.
func liveBench(t *testing.T, env string) {
	raw := livetest.DSN(t, env)
	rep := benchJSON(t, raw, "--cycles", "50")
	checkCycles(t, rep, 50, "session", "table")

	rep = benchJSON(t, raw, "--workers", "4", "--cycles", "50")
	checkContention(t, rep, 4, "session", "table")

	rep = benchJSON(t, raw, "--locks", "20")
	h := rep.HeldLocks
	if h == nil {
		t.Fatal("held_locks is null")
	}
	if h.Strategy != "session" || h.Locks != 20 || h.Acquired != 20 || h.Error != nil {
		t.Errorf("held_locks %+v, want 20 session locks taken", h)
	}
	if h.ConnectionsSource != benchkit.SourceServer || h.ServerSessions == nil || *h.ServerSessions < 1 || *h.ServerSessions > 20 || h.Connections != *h.ServerSessions {
		t.Errorf("held_locks connections %d (%s), server_sessions %v: want 1..20 counted by the server", h.Connections, h.ConnectionsSource, h.ServerSessions)
	}
	if h.ClientOpenConnections < 0 || h.TakeAllSeconds <= 0 || h.ReleaseAllSeconds <= 0 {
		t.Errorf("held_locks %+v: want times measured", h)
	}
	if len(rep.Cycles) != 0 || len(rep.Contention) != 0 || len(rep.HandOver) != 0 {
		t.Errorf("--locks measured more than held locks: %+v", rep)
	}

	rep = benchJSON(t, raw, "--wait", "--cycles", "3", "--strategy", "session")
	checkHandOver(t, rep, 3, "session")
}

func TestBenchLivePostgres(t *testing.T) {
	liveBench(t, "SCHEDLOCK_TEST_POSTGRES_DSN")
	raw := os.Getenv("SCHEDLOCK_TEST_POSTGRES_DSN")
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(u.User.Username(), secret)
	withPassword := u.String()
	t.Run("password hidden, table and yaml output", func(t *testing.T) {
		r := runCmd(t, false, nil, "bench", "--dsn", withPassword, "--cycles", "5", "--strategy", "session")
		assertRunHidden(t, r)
		if r.err != nil {
			t.Fatal(r.err)
		}
		lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
		if lines[0] != "MEASUREMENT\tSTRATEGY\tWHAT\tRESULT\tCOMPARED" || len(lines) != 4 {
			t.Errorf("piped table:\n%s\nwant a header and 3 rows (round trip, raw, engine)", r.stdout)
		}
		r = runCmd(t, false, nil, "bench", "--dsn", withPassword, "--cycles", "5", "--strategy", "table", "-o", "yaml")
		assertRunHidden(t, r)
		var doc map[string]any
		if err := yaml.Unmarshal([]byte(r.stdout), &doc); err != nil || doc["dialect"] != "postgres" || !strings.Contains(doc["target"].(string), "xxxxx") {
			t.Errorf("yaml %v (%v):\n%s", doc, err, r.stdout)
		}
	})
	t.Run("progress on a terminal", func(t *testing.T) {
		r := runCmd(t, true, nil, "bench", "--dsn", raw, "--cycles", "5", "--strategy", "session")
		if r.err != nil {
			t.Fatal(r.err)
		}
		if !strings.Contains(r.stderr, "[1] round 1 of 5: round trip…") || !strings.Contains(r.stderr, "round 5 of 5: session raw and engine lock cycles…") || !strings.HasSuffix(r.stderr, "\r\x1b[K") {
			t.Errorf("stderr %q: want progress lines, cleared at the end", r.stderr)
		}
		if !strings.Contains(r.stdout, "engine") || !strings.Contains(r.stdout, "on PostgreSQL") {
			t.Errorf("terminal table:\n%s", r.stdout)
		}
	})
}

func TestBenchLiveMySQL(t *testing.T) {
	liveBench(t, "SCHEDLOCK_TEST_MYSQL_DSN")
}
