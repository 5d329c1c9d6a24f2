package checks

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/sqlkit"
)

// results indexes a report's results by ID.
func results(rep *Report) map[string]Result {
	m := map[string]Result{}
	for _, r := range rep.Results {
		m[r.ID] = r
	}
	return m
}

// assertCounts checks the report's counters against its results.
func assertCounts(t *testing.T, rep *Report) {
	t.Helper()
	want := map[Status]int{}
	for _, r := range rep.Results {
		want[r.Status]++
	}
	got := map[Status]int{StatusPass: rep.Passed, StatusFail: rep.Failed, StatusSkip: rep.Skipped, StatusWarn: rep.Warned}
	for st, n := range want {
		if got[st] != n {
			t.Errorf("report counts %d %s results, want %d", got[st], st, n)
		}
	}
	if sum := rep.Passed + rep.Failed + rep.Skipped + rep.Warned; sum != len(rep.Results) {
		t.Errorf("counts add up to %d, want %d results", sum, len(rep.Results))
	}
}

func TestRunPassesOnCorrectDialect(t *testing.T) {
	db, server := openFake(faults{})
	var mu sync.Mutex
	var started, ended []string
	var totals []int
	before := time.Now()
	rep, err := Run(t.Context(), Config{Backend: db, Progress: func(r Result, start bool) {
		mu.Lock()
		defer mu.Unlock()
		if start {
			started = append(started, r.ID)
		} else {
			ended = append(ended, r.ID)
		}
	}, Total: func(n int) {
		mu.Lock()
		defer mu.Unlock()
		if len(started) != 0 && len(totals) == 0 {
			t.Errorf("first total after %d checks started", len(started))
		}
		totals = append(totals, n)
	}})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	assertCounts(t, rep)
	for _, r := range rep.Results {
		if r.Status != StatusPass {
			t.Errorf("%s: %s: %s (remedy %q)", r.ID, r.Status, r.Detail, r.Remedy)
		}
	}
	byID := results(rep)
	for _, id := range []string{"detect", "session.acquire", "session.contend", "session.pool-trap", "session.many", "session.handover", "session.kill", "session.shared-loss",
		"session.contention", "session.race10", "table.clock", "table.owner", "table.at-most", "table.at-least",
		"table.token", "table.names.special", "table.names.distinct", "table.names.length", "table.contention",
		"table.race10", "table.cleanup"} {
		if _, ok := byID[id]; !ok {
			t.Errorf("no result for %s", id)
		}
	}
	if rep.Info.Product != "fakedb" || rep.Elapsed <= 0 {
		t.Errorf("report info %+v, elapsed %s", rep.Info, rep.Elapsed)
	}
	if !slices.Equal(started, ended) || len(started) != len(rep.Results) {
		t.Errorf("progress: %d starts, %d ends, %d results", len(started), len(ended), len(rep.Results))
	}
	// The total announced last is the number of results: the cleanup of
	// the temporary table adds one to the checks.
	if len(totals) == 0 || totals[len(totals)-1] != len(rep.Results) || totals[0] != len(rep.Results)-1 {
		t.Errorf("totals %v for %d results", totals, len(rep.Results))
	}
	if rep.StartedAt.Before(before) || rep.StartedAt.After(time.Now()) {
		t.Errorf("StartedAt %s not within the run (began %s)", rep.StartedAt, before)
	}
	// Destructive checks run after every other one.
	firstDestructive := slices.IndexFunc(rep.Results, func(r Result) bool { return strings.HasSuffix(r.ID, ".kill") })
	for _, r := range rep.Results[firstDestructive:] {
		if !strings.HasSuffix(r.ID, ".kill") && !strings.HasSuffix(r.ID, ".shared-loss") && !strings.HasSuffix(r.ID, ".contention") && !strings.HasSuffix(r.ID, ".race10") && !strings.HasSuffix(r.ID, ".cleanup") {
			t.Errorf("%s runs after the destructive checks began", r.ID)
		}
	}
	assertNothingLeft(t, server)
}

// assertNothingLeft fails when the fake server still has a table or a
// session lock.
func assertNothingLeft(t *testing.T, s *fakeServer) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	for name := range s.tables {
		t.Errorf("table %s was left behind", name)
	}
	for name, conn := range s.sessions {
		t.Errorf("session lock %q still held by connection %d", name, conn)
	}
}

func TestRunOnEveryPreset(t *testing.T) {
	db, server := openFake(faults{noSession: true})
	prefix := NewPrefix()
	rep, err := Run(t.Context(), Config{Backend: db, Prefix: prefix, Tables: PresetTables(prefix)})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	assertCounts(t, rep)
	if rep.Failed != 0 || rep.Warned != 0 {
		for _, r := range rep.Results {
			if r.Status != StatusPass {
				t.Errorf("%s: %s: %s", r.ID, r.Status, r.Detail)
			}
		}
	}
	byID := results(rep)
	for _, p := range dialects.Presets() {
		for _, check := range []string{"token", "at-most", "cleanup"} {
			if _, ok := byID["table."+p+"."+check]; !ok {
				t.Errorf("no result for table.%s.%s", p, check)
			}
		}
	}
	if strings.Contains(byID["table.shedlock.token"].Detail, "<") {
		t.Errorf("shedlock has no token column, but the token check says %q", byID["table.shedlock.token"].Detail)
	}
	for id := range byID {
		if strings.HasPrefix(id, "session.") {
			t.Errorf("session check %s listed on a database without session locks", id)
		}
	}
	assertNothingLeft(t, server)
}

// TestBrokenDialectsFail proves each check can fail: a fake with one
// deliberate bug must fail (or warn) exactly where the bug shows.
func TestBrokenDialectsFail(t *testing.T) {
	tests := []struct {
		name   string
		faults faults
		only   []string
		want   Status
	}{
		{"grant twice", faults{grantTwice: true}, []string{"probe.session-locks", "session.contend", "table.contend", "session.pool-trap", "session.wait", "table.wait", "table.at-most", "session.contention", "table.contention", "session.race10", "table.race10", "table.names.special"}, StatusFail},
		{"release by any owner", faults{anyOwner: true}, []string{"table.owner", "session.pool-trap"}, StatusFail},
		{"token does not grow", faults{flatToken: true}, []string{"table.token", "table.at-most"}, StatusFail},
		{"at-least ignored", faults{ignoreAtLeast: true}, []string{"table.at-least"}, StatusFail},
		{"frozen clock", faults{frozenClock: true}, []string{"table.clock"}, StatusFail},
		{"clock hours off", faults{skew: 2 * time.Hour}, []string{"table.clock"}, StatusWarn},
		{"names compared like patterns", faults{likeNames: true}, []string{"session.names.distinct", "table.names.distinct"}, StatusFail},
		{"names truncated", faults{truncateNames: 64}, []string{"session.names.length", "table.names.length"}, StatusFail},
		{"loss not signalled", faults{silentLoss: true}, []string{"table.at-most"}, StatusFail},
		{"holder not named", faults{noHolder: true}, []string{"table.contend"}, StatusWarn},
		{"holder not found", faults{noHolder: true}, []string{"session.kill"}, StatusFail},
		{"kill needs a grant", faults{killPrivilege: true}, []string{"session.kill"}, StatusFail},
		{"refresh does not extend", faults{refreshNoMove: true}, []string{"table.refresh"}, StatusFail},
		{"release frees other names", faults{releaseAnyName: true}, []string{"table.names.special", "table.names.distinct"}, StatusFail},
		{"names cut at NUL", faults{cutAtNUL: true}, []string{"table.names.invalid"}, StatusFail},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			db, _ := openFake(tt.faults)
			rep, err := Run(t.Context(), Config{Backend: db, Only: tt.only})
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			assertCounts(t, rep)
			byID := results(rep)
			for _, id := range tt.only {
				r, ok := byID[id]
				switch {
				case !ok:
					t.Errorf("%s did not run", id)
				case r.Status != tt.want:
					t.Errorf("%s: %s (%s); want %s", id, r.Status, r.Detail, tt.want)
				case r.Detail == "":
					t.Errorf("%s: %s without a detail", id, r.Status)
				}
			}
			if tt.faults.killPrivilege && byID["session.kill"].Remedy != "GRANT KILL TO app" {
				t.Errorf("kill remedy %q, want the grant", byID["session.kill"].Remedy)
			}
		})
	}
}

func TestTableLeftBehindWarns(t *testing.T) {
	db, server := openFake(faults{noDrop: true, noSession: true})
	rep, err := Run(t.Context(), Config{Backend: db, Only: []string{"table.acquire"}})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	table := ""
	server.mu.Lock()
	for name := range server.tables {
		table = name
	}
	server.mu.Unlock()
	r := results(rep)["table.cleanup"]
	if table == "" || r.Status != StatusWarn || !strings.Contains(r.Detail, table) || !strings.Contains(r.Remedy, table) {
		t.Errorf("cleanup = %+v; want a warning naming table %s", r, table)
	}
	if rep.Warned != 1 || rep.Passed != 1 {
		t.Errorf("counts: %d passed, %d warned; want 1 and 1", rep.Passed, rep.Warned)
	}
}

func TestExistingTableIsKept(t *testing.T) {
	db, server := openFake(faults{noSession: true})
	table := dialects.Table{Preset: dialects.PresetShedlock, Name: "shedlock"}
	l, err := db.TableLocker(table)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.CreateTable(t.Context()); err != nil {
		t.Fatal(err)
	}
	rep, err := Run(t.Context(), Config{Backend: db, Tables: []dialects.Table{table}, Only: []string{"table.acquire", "table.contend"}})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if rep.Failed != 0 {
		t.Errorf("%d failed: %+v", rep.Failed, rep.Results)
	}
	if r := results(rep)["table.cleanup"]; r.Status != StatusPass || !strings.Contains(r.Detail, "existed before") {
		t.Errorf("cleanup = %+v; want a pass saying the table was kept", r)
	}
	server.mu.Lock()
	defer server.mu.Unlock()
	if server.tables["shedlock"] == nil {
		t.Error("the run dropped a table it did not create")
	}
	for name, row := range server.tables["shedlock"] {
		if row.until.After(server.now()) {
			t.Errorf("row %q is still held after the run", name)
		}
	}
}

func TestNewRunnerSetupErrors(t *testing.T) {
	db, _ := openFake(faults{noSession: true})
	tests := []struct {
		name string
		cfg  Config
		want error
	}{
		{"no database", Config{}, dialects.ErrInvalid},
		{"unknown check", Config{Backend: db, Only: []string{"session.contend"}}, dialects.ErrInvalid},
		{"session requested but missing", Config{Backend: db, Strategies: []dialects.Strategy{dialects.StrategySession}}, dialects.ErrUnsupported},
		{"unknown strategy", Config{Backend: db, Strategies: []dialects.Strategy{"magic"}}, dialects.ErrInvalid},
		{"bad table name", Config{Backend: db, Tables: []dialects.Table{{Name: "no such; table"}}}, dialects.ErrInvalid},
		{"table twice", Config{Backend: db, Tables: []dialects.Table{{Name: "t1"}, {Preset: dialects.PresetSchedlock, Name: "t1"}}}, dialects.ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := Run(t.Context(), tt.cfg)
			if !errors.Is(err, tt.want) || rep != nil {
				t.Errorf("Run = %v, %v; want no report and an error matching %v", rep, err, tt.want)
			}
		})
	}

}

// TestNoStrategyIsAFailedCheck: on a database with no possible strategy
// the run still reports its probes, and its "strategy" check fails with
// the reasons (matching ErrUnsupported) and a remedy.
// bareEngine is a database's engine with neither session locks nor a
// lease table.
type bareEngine struct{}

func (bareEngine) NewTableLocker(dialects.Table) (dialects.TableLocker, error) {
	return nil, fmt.Errorf("%w: no lease table on this database", dialects.ErrUnsupported)
}

func (bareEngine) RecommendStrategy() (dialects.Strategy, string) {
	return dialects.StrategyTable, "the lease table works on every database"
}

func TestNoStrategyIsAFailedCheck(t *testing.T) {
	db, _ := openFake(faults{noSession: true})
	noStrategy := sqlkit.New(db.SQL, db.Info, nil, bareEngine{})
	rep, err := Run(t.Context(), Config{Backend: noStrategy})
	if err != nil {
		t.Fatalf("Run = %v; want a report", err)
	}
	byID := results(rep)
	if byID["detect"].Status != StatusPass {
		t.Errorf("detect = %+v; want passed", byID["detect"])
	}
	st := byID["strategy"]
	if st.Status != StatusFail || !strings.Contains(st.Detail, "no lock strategy is possible") || st.Remedy == "" || rep.Failed != 1 {
		t.Errorf("strategy = %+v, %d failed; want the one failure, with reasons and a remedy", st, rep.Failed)
	}
	// One reason per strategy, each after "; ", on one line.
	if strings.Contains(st.Detail, "\n") || strings.Count(st.Detail, "; ") < len(dialects.Strategies)-1 {
		t.Errorf("strategy detail %q: want the reasons on one line, separated by \"; \"", st.Detail)
	}
	for id := range byID {
		if strings.HasPrefix(id, "table.") || strings.HasPrefix(id, "session.") {
			t.Errorf("check %s ran with no strategy possible", id)
		}
	}
}

func TestUnknownCheckListsEveryCheck(t *testing.T) {
	var all []Check
	var ids []string
	for i := range 40 {
		id := fmt.Sprintf("table.check-%02d", i)
		all = append(all, Check{ID: id})
		ids = append(ids, id)
	}
	long := strings.Repeat("x", 200)
	tests := []struct {
		name, only string
		want       []string
		wantNot    string
	}{
		{"short name", "bogus", []string{`unknown check "bogus"`, strings.Join(ids, ", ")}, "bytes)"},
		{"long name is cut, the list is not", long, []string{"(200 bytes)", strings.Join(ids, ", ")}, long},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := selectChecks(all, []string{tt.only})
			if !errors.Is(err, dialects.ErrInvalid) {
				t.Fatalf("selectChecks = %v; want ErrInvalid", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if strings.Contains(err.Error(), tt.wantNot) {
				t.Errorf("error %q says %q", err, tt.wantNot)
			}
		})
	}
}

func TestRunStopsWhenCancelled(t *testing.T) {
	db, server := openFake(faults{})
	ctx, cancel := context.WithCancel(t.Context())
	rep, err := Run(ctx, Config{Backend: db, Progress: func(r Result, started bool) {
		if !started && r.ID == "table.acquire" {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v; want context.Canceled", err)
	}
	if rep == nil || len(rep.Results) == 0 {
		t.Fatal("no partial report")
	}
	byID := results(rep)
	if _, ran := byID["table.race10"]; ran {
		t.Error("checks kept running after cancel")
	}
	if r := byID["table.cleanup"]; r.Status != StatusPass {
		t.Errorf("cleanup after cancel = %+v; want the table dropped", r)
	}
	assertNothingLeft(t, server)
}

// TestInterruptedCheckIsNotFailed cancels the run while a check is under
// way: that check is reported skipped as interrupted, not failed, and
// the report counts no failure.
func TestInterruptedCheckIsNotFailed(t *testing.T) {
	db, server := openFake(faults{})
	r, err := NewRunner(Config{Backend: db})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	res := r.RunCheck(ctx, Check{ID: "slow", Title: "waits for the end", Run: func(ctx context.Context, env *Env) (string, error) {
		cancel()
		<-ctx.Done()
		return "round 3", ctx.Err()
	}})
	if res.Status != StatusSkip || !strings.Contains(res.Detail, "interrupted") || res.Remedy != "" {
		t.Errorf("interrupted check = %+v; want skipped as interrupted, with no remedy", res)
	}
	r.Cleanup(t.Context())
	assertNothingLeft(t, server)
}

func TestLabelsAndIDsAreUnique(t *testing.T) {
	db, _ := openFake(faults{})
	cfg := Config{Backend: db, Tables: []dialects.Table{{Name: "a"}, {Name: "b"}, {Preset: dialects.PresetShedlock, Name: "c"}}}
	seen := map[string]bool{}
	for _, c := range Suite(cfg) {
		if seen[c.ID] {
			t.Errorf("duplicate check ID %s", c.ID)
		}
		seen[c.ID] = true
	}
	for _, id := range []string{"table.schedlock-1.acquire", "table.schedlock-2.acquire", "table.shedlock.acquire", "session.kill"} {
		if !seen[id] {
			t.Errorf("no check %s in %v", id, seen)
		}
	}
}
