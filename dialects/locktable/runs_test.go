package locktable_test

import (
	"database/sql/driver"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/dameng"
	"github.com/schedlock/schedlock/dialects/locktable"
	"github.com/schedlock/schedlock/dialects/mysql"
	"github.com/schedlock/schedlock/dialects/oracle"
	"github.com/schedlock/schedlock/dialects/postgres"
	"github.com/schedlock/schedlock/dialects/sqlite"
	"github.com/schedlock/schedlock/dialects/sqlserver"
	"github.com/schedlock/schedlock/internal/fakesql"
	"github.com/schedlock/schedlock/internal/golden"
)

// runBuilders are the Builders of every dialect with a run table.
func runBuilders() map[string]locktable.Builder {
	return map[string]locktable.Builder{
		"postgres":  postgres.Builder{},
		"mysql":     mysql.NewBuilder(dialects.Info{Product: dialects.ProductMariaDB, Version: "11.4.2"}),
		"sqlite":    sqlite.Builder{},
		"oracle":    &oracle.Builder{},
		"sqlserver": sqlserver.Builder{},
		"dameng":    &dameng.Builder{},
	}
}

// TestRunsGolden keeps the run table's SQL of every dialect in
// testdata/runs.DIALECT.golden (go test ./dialects/locktable -run
// RunsGolden -update-runs rewrites them).
func TestRunsGolden(t *testing.T) {
	for name, b := range runBuilders() {
		t.Run(name, func(t *testing.T) {
			rb, ok := b.(locktable.RunsBuilder)
			if !ok {
				t.Fatalf("%s's Builder has no run table", name)
			}
			stmts := locktable.RunStatements(rb.RunsSQL(), "schedlock_runs", b.MaxNameRunes(mustSchema(t, dialects.Table{})), true)
			keys := make([]string, 0, len(stmts))
			for k := range stmts {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			var out strings.Builder
			for _, k := range keys {
				fmt.Fprintf(&out, "-- %s\n%s\n\n", k, stmts[k])
			}
			golden.Check(t, filepath.Join("testdata", "runs."+name+".golden"), out.String())
		})
	}
}

func mustSchema(t *testing.T, tb dialects.Table) dialects.Schema {
	t.Helper()
	s, err := tb.Schema()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// placeholderRE finds the bound parameters of every dialect's style.
var placeholderRE = regexp.MustCompile(`\$\d+|@p\d+|:\d+|\?`)

// literalRE finds string literals, whose text holds no placeholder.
var literalRE = regexp.MustCompile(`'[^']*'`)

// runsServer is a fake server that keeps a run table and answers the
// engine's run statements, reading their bound values by position as the
// engine binds them. It fails a statement whose placeholders do not match
// its values in number, so a dialect that writes one too many or too few
// is caught without its server.
type runsServer struct {
	mu    sync.Mutex
	rows  []fakeRun
	now   time.Time
	exist bool
	// legacy: the table was created without the schedule column.
	legacy bool
}

type fakeRun struct {
	name, host, owner, schedule    string
	token, back, dur, atMost, exit int64
	ended                          time.Time
}

func (s *runsServer) Close(*fakesql.Session) {}

func (s *runsServer) Handle(_ *fakesql.Session, q string, args []driver.NamedValue) (fakesql.Response, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	marks := placeholderRE.FindAllString(literalRE.ReplaceAllString(q, "''"), -1)
	distinct := map[string]bool{}
	for _, m := range marks {
		if m == "?" {
			distinct[fmt.Sprint(len(distinct))] = true
		} else {
			distinct[m] = true
		}
	}
	if !strings.Contains(q, "CREATE TABLE") && len(distinct) != len(args) {
		return fakesql.Response{}, fmt.Errorf("statement has %d placeholders and %d values: %s", len(distinct), len(args), q)
	}
	v := func(i int) any { return args[i].Value }
	str := func(i int) string { return v(i).(string) }
	num := func(i int) int64 { return v(i).(int64) }
	switch {
	case strings.Contains(q, "CREATE TABLE"):
		s.exist = true
		return fakesql.Response{}, nil
	case !s.exist:
		return fakesql.Response{}, errors.New("no such table: schedlock_runs")
	case s.legacy && strings.HasPrefix(q, "SELECT schedule_spec "):
		return fakesql.Response{}, errors.New("no such column: schedule_spec")
	case strings.Contains(q, "WHERE 1 = 0"):
		cols := runCols
		if s.legacy {
			cols = cols[:len(cols)-1]
		}
		return fakesql.Response{Columns: cols}, nil
	case strings.HasPrefix(q, "ALTER TABLE schedlock_runs ADD schedule_spec "):
		s.legacy = false
		return fakesql.Response{}, nil
	case s.legacy && strings.Contains(q, ".schedule_spec"), s.legacy && strings.Contains(q, "schedule_spec)"):
		return fakesql.Response{}, errors.New("no such column: schedule_spec")
	case strings.HasPrefix(q, "DELETE") && strings.Contains(q, "token >="):
		s.filter(func(r fakeRun) bool { return !(r.name == str(0) && r.token >= num(1)) })
	case strings.HasPrefix(q, "INSERT") && strings.Contains(q, "MAX("):
		last := len(args) - 1 // the name again, after the schedule where there is one
		if str(0) != str(last) {
			return fakesql.Response{}, fmt.Errorf("insert_next binds two names: %v", args)
		}
		next := int64(1)
		if newest := s.newest(str(0), 1); len(newest) > 0 {
			next = newest[0].token + 1
		}
		r := fakeRun{name: str(0), token: next, host: str(1), owner: str(2), back: num(3), dur: num(4), atMost: num(5), exit: num(6), ended: s.now}
		if last == 8 {
			r.schedule = str(7)
		}
		s.rows = append(s.rows, r)
	case strings.HasPrefix(q, "INSERT"):
		r := fakeRun{name: str(0), token: num(1), host: str(2), owner: str(3), back: num(4), dur: num(5), atMost: num(6), exit: num(7), ended: s.now}
		if len(args) == 9 {
			r.schedule = str(8)
		}
		s.rows = append(s.rows, r)
	case strings.HasPrefix(q, "DELETE"):
		if str(0) != str(1) {
			return fakesql.Response{}, fmt.Errorf("prune binds two names: %v", args)
		}
		keep := s.newest(str(0), int(num(2)))
		if len(keep) > 0 {
			floor := keep[len(keep)-1].token
			s.filter(func(r fakeRun) bool { return r.name != str(0) || r.token >= floor })
		}
	case strings.Contains(q, "MAX("):
		var out [][]any
		names := map[string]bool{}
		for _, r := range s.rows {
			names[r.name] = true
		}
		succeeded := strings.Contains(q, "exit_code = 0")
		for n := range names {
			for _, r := range s.newest(n, len(s.rows)) {
				if !succeeded || r.exit == 0 {
					out = append(out, s.row(r))
					break
				}
			}
		}
		return fakesql.Response{Columns: runCols, Rows: out}, nil
	case strings.HasPrefix(q, "SELECT"):
		var out [][]any
		for _, r := range s.newest(str(0), int(num(1))) {
			out = append(out, s.row(r))
		}
		return fakesql.Response{Columns: runCols, Rows: out}, nil
	default:
		return fakesql.Response{}, fmt.Errorf("unexpected statement %s", q)
	}
	return fakesql.Response{RowsAffected: 1}, nil
}

var runCols = []string{"name", "token", "hostname", "locked_by", "started", "ended", "duration_ms", "at_most_ms", "exit_code", "schedule_spec"}

func (s *runsServer) row(r fakeRun) []any {
	var sched any // NULLIF(?, ''): no schedule is NULL
	if r.schedule != "" {
		sched = r.schedule
	}
	return []any{r.name, r.token, r.host, r.owner, r.ended.Add(time.Duration(r.back) * time.Millisecond).UnixMilli(), r.ended.UnixMilli(), r.dur, r.atMost, r.exit, sched}
}

func (s *runsServer) filter(keep func(fakeRun) bool) {
	out := s.rows[:0]
	for _, r := range s.rows {
		if keep(r) {
			out = append(out, r)
		}
	}
	s.rows = out
}

func (s *runsServer) newest(name string, n int) []fakeRun {
	var out []fakeRun
	for _, r := range s.rows {
		if r.name == name {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].token > out[j].token })
	if len(out) > n {
		out = out[:n]
	}
	return out
}

// TestRunsFakeDriver runs the engine on every dialect's SQL against the
// fake server: values bound in the order the placeholders ask for them,
// pruning to the newest, clearing a recreated row's runs, reading back.
func TestRunsFakeDriver(t *testing.T) {
	for name, b := range runBuilders() {
		t.Run(name, func(t *testing.T) {
			srv := &runsServer{now: time.Date(2026, 12, 1, 2, 0, 0, 0, time.UTC)}
			db, _ := fakesql.Open(srv)
			defer db.Close()
			l, err := locktable.New(db, b, dialects.Table{})
			if err != nil {
				t.Fatal(err)
			}
			h, err := l.RunHistory()
			if err != nil {
				t.Fatal(err)
			}
			if h.Table() != "schedlock_runs" {
				t.Errorf("run table %q", h.Table())
			}
			ctx := t.Context()
			if err := h.Record(ctx, dialects.Run{Name: "job", Token: 1}, 2); err == nil {
				t.Error("Record without a run table succeeded")
			}
			if err := h.CreateTable(ctx); err != nil {
				t.Fatal(err)
			}
			for tok := int64(1); tok <= 4; tok++ {
				run := dialects.Run{Name: "job", Token: tok, Host: "h", Owner: "o", Duration: 90 * time.Second, AtMost: 2 * time.Minute, ExitCode: 2}
				if err := h.Record(ctx, run, 2); err != nil {
					t.Fatalf("Record %d: %v", tok, err)
				}
			}
			runs, err := h.Runs(ctx, "job", 10)
			if err != nil {
				t.Fatal(err)
			}
			if len(runs) != 2 || runs[0].Token != 4 || runs[1].Token != 3 {
				t.Fatalf("runs %+v, want tokens 4 and 3", runs)
			}
			r := runs[0]
			if r.Duration != 90*time.Second || r.AtMost != 2*time.Minute || r.ExitCode != 2 || !r.EndedAt.Equal(srv.now) || !r.StartedAt.Equal(srv.now.Add(-90*time.Second)) {
				t.Errorf("run read back as %+v", r)
			}
			last, err := h.LastRuns(ctx)
			if err != nil || last["job"].Token != 4 {
				t.Errorf("LastRuns = %v, %v", last, err)
			}
			checkSchedules(t, h, srv, func() dialects.RunHistory { // a new process: columns not read yet
				t.Helper()
				l, err := locktable.New(db, b, dialects.Table{})
				if err != nil {
					t.Fatal(err)
				}
				rh, err := l.RunHistory()
				if err != nil {
					t.Fatal(err)
				}
				return rh
			})
		})
	}
}

// TestRunsOtherPresetsFakeDriver: a ShedLock or sys_sched_lock table keeps
// its runs in schedlock's own run table of its schema, and a run without a
// fencing token gets the next token of its name, on every dialect's SQL.
func TestRunsOtherPresetsFakeDriver(t *testing.T) {
	for name, b := range runBuilders() {
		for _, tb := range []dialects.Table{{Preset: dialects.PresetShedlock}, {Preset: dialects.PresetSysSchedLock, Name: "jobs.sys_sched_lock"}} {
			t.Run(name+"/"+tb.Preset, func(t *testing.T) {
				srv := &runsServer{now: time.Date(2026, 12, 1, 2, 0, 0, 0, time.UTC)}
				db, _ := fakesql.Open(srv)
				defer db.Close()
				l, err := locktable.New(db, b, tb)
				if err != nil {
					t.Fatal(err)
				}
				h, err := l.RunHistory()
				if err != nil {
					t.Fatal(err)
				}
				want := "schedlock_runs"
				if tb.Name != "" {
					want = "jobs.schedlock_runs"
				}
				if h.Table() != want {
					t.Errorf("run table of %s = %q, want %q", tb.Preset, h.Table(), want)
				}
				ctx := t.Context()
				if err := h.CreateTable(ctx); err != nil {
					t.Fatal(err)
				}
				for i := 1; i <= 3; i++ {
					run := dialects.Run{Name: "job", Host: "h", Owner: "o", Duration: time.Duration(i) * time.Minute, AtMost: 4 * time.Minute, ExitCode: i}
					if err := h.Record(ctx, run, 2); err != nil {
						t.Fatalf("Record %d: %v", i, err)
					}
				}
				runs, err := h.Runs(ctx, "job", 10)
				if err != nil {
					t.Fatal(err)
				}
				if len(runs) != 2 || runs[0].Token != 3 || runs[1].Token != 2 || runs[0].ExitCode != 3 || runs[0].Duration != 3*time.Minute {
					t.Fatalf("runs %+v, want tokens 3 and 2, the newest with exit code 3 and 3m", runs)
				}
				if share := runs[0].Share(); share <= dialects.RunShareWarning {
					t.Errorf("share of a 3m run of 4m = %v, want past the warning", share)
				}
			})
		}
	}
}

// checkSchedules records scheduled runs, reads them and the newest success
// back, then does the same on a run table created before the schedule
// column: the run is recorded without it (NoScheduleColumnError) until
// CreateTable adds the column.
func checkSchedules(t *testing.T, h dialects.RunHistory, srv *runsServer, fresh func() dialects.RunHistory) {
	t.Helper()
	ctx := t.Context()
	for i, exit := range []int{0, 0, 3} { // tokens 5, 6, 7
		run := dialects.Run{Name: "sched", Token: int64(5 + i), Host: "h", Owner: "o", ExitCode: exit, Schedule: "*/5 * * * *"}
		if err := h.Record(ctx, run, 10); err != nil {
			t.Fatalf("Record %d: %v", run.Token, err)
		}
	}
	last, err := h.LastRuns(ctx)
	if err != nil || last["sched"].Token != 7 || last["sched"].Schedule != "*/5 * * * *" || last["job"].Schedule != "" {
		t.Errorf("LastRuns = %+v, %v", last, err)
	}
	ok, err := h.LastSuccesses(ctx)
	if err != nil || ok["sched"].Token != 6 || ok["sched"].ExitCode != 0 {
		t.Errorf("LastSuccesses = %+v, %v", ok, err)
	}

	srv.mu.Lock()
	srv.rows, srv.legacy = nil, true
	srv.mu.Unlock()
	old := fresh()
	err = old.Record(ctx, dialects.Run{Name: "sched", Token: 1, Schedule: "@every 5m"}, 10)
	var nocol *dialects.NoScheduleColumnError
	if !errors.As(err, &nocol) || !strings.Contains(nocol.AddSQL, "ADD schedule_spec") {
		t.Fatalf("Record on a table without the schedule column = %v", err)
	}
	if runs, err := old.Runs(ctx, "sched", 10); err != nil || len(runs) != 1 || runs[0].Schedule != "" {
		t.Fatalf("runs of the old table %+v, %v", runs, err)
	}
	if err := old.Record(ctx, dialects.Run{Name: "sched", Token: 2}, 10); err != nil {
		t.Fatalf("Record without a schedule on the old table: %v", err)
	}
	if err := old.CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	if srv.legacy {
		t.Fatal("CreateTable did not add the schedule column")
	}
	if err := old.Record(ctx, dialects.Run{Name: "sched", Token: 3, Schedule: "@every 5m"}, 10); err != nil {
		t.Fatalf("Record after the column was added: %v", err)
	}
	if last, err := old.LastRuns(ctx); err != nil || last["sched"].Schedule != "@every 5m" {
		t.Errorf("LastRuns after the column was added = %+v, %v", last, err)
	}
}
