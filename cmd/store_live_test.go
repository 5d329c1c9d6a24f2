package cmd

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/schedlock/schedlock/internal/benchkit"
)

// listedLock is a lock as `locks ls -o json` lists it.
type listedLock struct {
	Name, Key, State, Owner, Source, Preset string
	Token                                   *int64
}

// checkRunListedAndForced runs a job holding name on dsn and checks what
// the commands show of it, the same on every store: `locks ls` lists it
// held, by an owner, with a token of at least 1 (and whatever else ok
// requires of the entry); `unlock` without the owner is refused (exit
// CodeNegative); `unlock --force` frees it, which stops the run.
func checkRunListedAndForced(t *testing.T, dsn, name string, ok func(listedLock) bool) {
	t.Helper()
	started := filepath.Join(t.TempDir(), "started")
	done := make(chan result, 1)
	go func() {
		done <- runCmd(t, false, nil, "run", "--dsn", dsn, "--name", name, "--at-most", "3s", "--kill-grace", "500ms", "--", "sh", "-c", "touch "+started+"; sleep 30")
	}()
	waitStarted(t, started, done)
	r := runCmd(t, false, nil, "locks", "ls", "--dsn", dsn, "-o", "json", "--name", name)
	var listed []listedLock
	if err := json.Unmarshal([]byte(r.stdout), &listed); err != nil || len(listed) != 1 {
		t.Fatalf("locks ls: %v %v\n%s", err, r.err, r.stdout)
	}
	if l := listed[0]; l.State != "held" || l.Name != name || l.Token == nil || *l.Token < 1 || l.Owner == "" || !ok(l) {
		t.Errorf("locks ls: %+v", l)
	}
	r = runCmd(t, false, nil, "unlock", name, "--dsn", dsn, "--yes")
	if ExitCode(r.err) != CodeNegative {
		t.Errorf("unlock without the owner: exit %d (%v), want %d", ExitCode(r.err), r.err, CodeNegative)
	}
	r = runCmd(t, false, nil, "unlock", name, "--dsn", dsn, "--force", "--yes")
	if r.err != nil {
		t.Fatalf("unlock --force: %v %s", r.err, r.stderr)
	}
	select {
	case res := <-done:
		if ExitCode(res.err) == 0 {
			t.Errorf("run went on after its lock was freed: %v", res.err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("run did not stop after its lock was freed")
	}
}

// benchBesideRaw runs `bench --cycles 20` on dsn and checks that it
// measured the store's raw operations (what) beside the engine.
func benchBesideRaw(t *testing.T, dsn, what string) benchkit.Report {
	t.Helper()
	rep := benchJSON(t, dsn, "--cycles", "20")
	if rep.RoundTrip == nil || len(rep.Cycles) != 1 || rep.Cycles[0].Raw == nil || rep.Cycles[0].EngineToRaw == nil {
		t.Errorf("bench: %+v %+v, want the raw %s beside the engine", rep.RoundTrip, rep.Cycles, what)
	}
	return rep
}
