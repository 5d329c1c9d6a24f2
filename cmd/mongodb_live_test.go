//go:build unix

package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/checks"
	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/mongodb"
	"github.com/schedlock/schedlock/dialects/mongodb/mongotest"
	"github.com/schedlock/schedlock/internal/livetest"
	"github.com/schedlock/schedlock/internal/tcpproxy"
)

// startFerretDB starts a FerretDB of the test's own (the live tests'
// DSN variable must be set: without it the test skips).
func startFerretDB(t *testing.T) *mongotest.FerretDB {
	t.Helper()
	livetest.DSN(t, livetest.MongoDB)
	return mongotest.StartFerretDB(t)
}

// createCollection creates the default lock collection on dsn.
func createCollection(t *testing.T, dsn string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	b, err := mongodb.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	l, err := b.LeaseLocker(dialects.Table{})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.(dialects.TableCreator).CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
}

// Every command on MongoDB (FerretDB behind the serializing proxy):
// selfcheck passes once --allow-risk accepts FerretDB's non-atomic
// updates and fails without, detect names the server and its risks, run
// holds the lock while locks ls shows it with its owner and token,
// unlock's owner guard refuses and --force frees it (run then stops), and
// bench measures the engine beside the raw driver operations.
func TestMongoDBCommands(t *testing.T) {
	live := livetest.DSN(t, livetest.MongoDB)
	dsn := dropAtEnd(t, mongotest.Serialize(t, "mongodb://"+hostOf(live)+"/"+ownDatabase()))
	r := runCmd(t, false, nil, "selfcheck", "--dsn", dsn, "-o", "json", "--allow-risk", dialects.RiskNonAtomicUpdates)
	if r.err != nil {
		t.Fatalf("selfcheck: %v\n%s", r.err, r.stdout)
	}
	if st := checkStatuses(t, r.stdout); st["probe.two-holders"] != "warn" {
		t.Errorf("selfcheck: probe.two-holders %q; want a warning of the accepted risk", st["probe.two-holders"])
	}
	r = runCmd(t, false, nil, "selfcheck", "--dsn", dsn, "-o", "json", "--check", "probe.two-holders")
	if ExitCode(r.err) != CodeNegative {
		t.Errorf("selfcheck without accepting non-atomic-updates: exit %d, want %d", ExitCode(r.err), CodeNegative)
	}
	r = runCmd(t, false, nil, "detect", "--dsn", dsn, "-o", "json")
	if r.err != nil {
		t.Fatal(r.err)
	}
	var det struct {
		Dialect, Version, Banner string
		Risks                    []struct{ ID string }
	}
	if err := json.Unmarshal([]byte(r.stdout), &det); err != nil {
		t.Fatal(err)
	}
	ids := fmt.Sprint(det.Risks)
	if det.Dialect != "mongodb" || det.Version == "" || !strings.Contains(ids, dialects.RiskNonAtomicUpdates) || !strings.Contains(ids, "standalone") {
		t.Errorf("detect: %+v, want mongodb, its version, non-atomic-updates and standalone", det)
	}
	createCollection(t, dsn)

	checkRunListedAndForced(t, dsn, "nightly.report$eu", func(listedLock) bool { return true })
	benchBesideRaw(t, dsn, "driver operations")
}

// ownDatabase is the name of a database of the test's own.
func ownDatabase() string {
	return "cmd_" + strings.TrimPrefix(checks.NewPrefix(), "schedlock_selfcheck_")
}

// dropAtEnd drops the database of dsn when t ends, and returns dsn.
func dropAtEnd(t *testing.T, dsn string) string {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if b, err := mongodb.Open(ctx, dsn); err == nil {
			_ = b.Database().Drop(ctx)
			_ = b.Close()
		}
	})
	return dsn
}

// hostOf is the host:port of a mongodb:// DSN.
func hostOf(dsn string) string {
	rest := dsn[strings.Index(dsn, "://")+3:]
	if i := strings.IndexAny(rest, "/?"); i >= 0 {
		rest = rest[:i]
	}
	if i := strings.LastIndex(rest, "@"); i >= 0 {
		rest = rest[i+1:]
	}
	return rest
}

// mongoContend acquires name on dsn, retrying until it gets the lock,
// and reports when it did and its token.
func mongoContend(t *testing.T, dsn, name string, limit time.Duration) (time.Time, int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit+5*time.Second)
	defer cancel()
	b, err := mongodb.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	l, err := b.Locker(dialects.StrategyTable, dialects.Table{})
	if err != nil {
		t.Fatal(err)
	}
	lease, err := l.Acquire(ctx, name, dialects.Options{AtMost: time.Minute, Wait: limit, RetryEvery: 20 * time.Millisecond, Owner: "contender"})
	if err != nil {
		t.Fatalf("the contender never got the lock: %v", err)
	}
	at := time.Now()
	tok, _ := lease.Token()
	_ = lease.Release(ctx)
	return at, tok
}

// FerretDB stops while run holds a lock and comes back on the same
// files: run cannot refresh and stops its command at its lease's end on
// its own clock; the document survived the restart, so the contender
// gets the lock only once the lease written on the server has ended,
// after the command stopped.
func TestMongoDBRunServerRestartedStopsChildFirst(t *testing.T) {
	f := startFerretDB(t)
	dsn := mongotest.Serialize(t, "mongodb://"+f.Addr()+"/schedlock_fault?serverSelectionTimeoutMS=1000")
	createCollection(t, dsn)
	started, stopped, done := faultRun(t, dsn, "restart-job")
	f.Stop()
	at := time.Now()
	expectLost(t, done)
	f.Start(t)
	gotAt, token := mongoContend(t, dsn, "restart-job", 30*time.Second)
	checkStoppedFirst(t, started, stopped, gotAt, token, "server stopped", at)
}

// The connection of run to the server is cut (internal/tcpproxy) while
// it holds: run stops its command at its lease's end, before a contender
// connected directly can take the lock.
func TestMongoDBRunConnectionCutStopsChildFirst(t *testing.T) {
	f := startFerretDB(t)
	direct := mongotest.Serialize(t, "mongodb://"+f.Addr()+"/schedlock_fault?serverSelectionTimeoutMS=1000")
	createCollection(t, direct)
	serial := strings.TrimPrefix(strings.Split(direct, "/schedlock_fault")[0], "mongodb://")
	p, err := tcpproxy.Start(serial)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	t.Cleanup(p.Restore)
	started, stopped, done := faultRun(t, "mongodb://"+p.Addr()+"/schedlock_fault?serverSelectionTimeoutMS=1000", "cut-job")
	p.Cut()
	at := time.Now()
	gotAt, token := mongoContend(t, direct, "cut-job", 30*time.Second)
	expectLost(t, done)
	checkStoppedFirst(t, started, stopped, gotAt, token, "connection cut", at)
}
