//go:build unix

package cmd

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/nats"
	"github.com/schedlock/schedlock/internal/tcpproxy"
)

// natsServer is a nats-server of the test's own, embedded, with
// JetStream on a file store in dir, on port (0: a free one); stopped when
// the test ends. A server started again on the same port and dir finds
// its buckets.
type natsServer struct {
	port int
	dir  string
	s    *server.Server
}

func startNATS(t *testing.T) *natsServer {
	t.Helper()
	n := &natsServer{dir: t.TempDir()}
	n.start(t)
	t.Cleanup(n.stop)
	return n
}

func (n *natsServer) start(t *testing.T) {
	t.Helper()
	port := n.port
	if port == 0 {
		port = -1
	}
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: port, JetStream: true, StoreDir: n.dir, NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("embedded nats-server did not start")
	}
	n.s, n.port = s, s.Addr().(*net.TCPAddr).Port
}

func (n *natsServer) stop() {
	if n.s != nil {
		n.s.Shutdown()
		n.s.WaitForShutdown()
		n.s = nil
	}
}

func (n *natsServer) addr() string { return "127.0.0.1:" + strconv.Itoa(n.port) }

// bucket creates the KV bucket name (history 1) and returns the DSN of it.
func (n *natsServer) bucket(t *testing.T, name string) string {
	t.Helper()
	nc, err := natsgo.Connect("nats://" + n.addr())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	if _, err := js.CreateKeyValue(context.Background(), jetstream.KeyValueConfig{Bucket: name, History: 1}); err != nil {
		t.Fatal(err)
	}
	return "nats://" + n.addr() + "/" + name
}

// Every command on NATS: selfcheck passes once --allow-risk accepts
// JetStream's default fsync, detect names the server and its risks, run
// holds the lock while locks ls shows it with its key, owner and token,
// unlock's owner guard refuses and --force frees it (run then stops), and
// bench measures the engine beside the raw KV operations.
func TestNATSCommands(t *testing.T) {
	dsn := startNATS(t).bucket(t, "locks")
	r := runCmd(t, false, nil, "selfcheck", "--dsn", dsn, "-o", "json", "--allow-risk", dialects.RiskAsyncFsync)
	if r.err != nil {
		t.Fatalf("selfcheck: %v\n%s", r.err, r.stdout)
	}
	if st := checkStatuses(t, r.stdout); st["probe.risks"] != "pass" || st["probe.two-holders"] != "warn" {
		t.Errorf("selfcheck: probe.risks %q, probe.two-holders %q; want passed, and a warning of the accepted risk", st["probe.risks"], st["probe.two-holders"])
	}
	r = runCmd(t, false, nil, "selfcheck", "--dsn", dsn, "-o", "json")
	if ExitCode(r.err) != CodeNegative {
		t.Errorf("selfcheck without accepting async-fsync: exit %d, want %d", ExitCode(r.err), CodeNegative)
	}
	r = runCmd(t, false, nil, "detect", "--dsn", dsn, "-o", "json")
	if r.err != nil {
		t.Fatal(r.err)
	}
	var det struct {
		Dialect, Version string
		Risks            []struct{ ID string }
	}
	if err := json.Unmarshal([]byte(r.stdout), &det); err != nil {
		t.Fatal(err)
	}
	if det.Dialect != "nats" || det.Version == "" || len(det.Risks) == 0 || det.Risks[0].ID != dialects.RiskAsyncFsync {
		t.Errorf("detect: %+v, want nats, its version and async-fsync", det)
	}

	checkRunListedAndForced(t, dsn, "nightly.report", func(l listedLock) bool { return l.Key == "nightly=2Ereport" })
	benchBesideRaw(t, dsn, "KV operations")
}

// natsContend acquires name on dsn, retrying until it gets the lock, and
// reports when it did and its token.
func natsContend(t *testing.T, dsn, name string, limit time.Duration) (time.Time, int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit+5*time.Second)
	defer cancel()
	b, err := nats.Open(ctx, dsn)
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

// checkStoppedFirst checks that run's command was stopped before the
// contender got the lock, with a higher token.
func checkStoppedFirst(t *testing.T, started, stopped string, gotAt time.Time, token int64, what string, at time.Time) {
	t.Helper()
	stoppedAt := readNanos(t, stopped)
	if !stoppedAt.Before(gotAt) {
		t.Fatalf("the command was stopped at %s, after the contender got the lock at %s", stoppedAt.Format(time.StampMilli), gotAt.Format(time.StampMilli))
	}
	held, _ := os.ReadFile(started)
	if old, _ := strconv.ParseInt(strings.TrimSpace(string(held)), 10, 64); token <= old {
		t.Errorf("the contender's token %d is not above the lost holder's %d", token, old)
	}
	t.Logf("%s at +0; command stopped at +%s; contender got the lock at +%s", what, stoppedAt.Sub(at).Round(time.Millisecond), gotAt.Sub(at).Round(time.Millisecond))
}

// The NATS server stops while run holds a lock and comes back on the
// same store: run cannot refresh and stops its command at its lease's end
// on its own clock; the key survived the restart, so the contender gets
// the lock only once the lease written on the server has ended, after
// the command stopped.
func TestNATSRunServerRestartedStopsChildFirst(t *testing.T) {
	n := startNATS(t)
	dsn := n.bucket(t, "locks")
	started, stopped, done := faultRun(t, dsn, "restart-job")
	n.stop()
	at := time.Now()
	expectLost(t, done)
	n.start(t)
	gotAt, token := natsContend(t, dsn, "restart-job", 30*time.Second)
	checkStoppedFirst(t, started, stopped, gotAt, token, "server stopped", at)
}

// The connection of run to NATS is cut (an in-test proxy) while it
// holds: run stops its command at its lease's end, before a contender
// connected directly can take the lock.
func TestNATSRunConnectionCutStopsChildFirst(t *testing.T) {
	n := startNATS(t)
	dsn := n.bucket(t, "locks")
	p, err := tcpproxy.Start(n.addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	t.Cleanup(p.Restore)
	started, stopped, done := faultRun(t, "nats://"+p.Addr()+"/locks", "cut-job")
	p.Cut()
	at := time.Now()
	gotAt, token := natsContend(t, dsn, "cut-job", 30*time.Second)
	expectLost(t, done)
	checkStoppedFirst(t, started, stopped, gotAt, token, "connection cut", at)
}

// A pause on the shedlock preset is the lock's own key in ShedLock's
// layout: a ShedLock node reads its value as a lease end ahead and skips
// the job, run skips it too, and resume frees it.
func TestNATSPauseShedlock(t *testing.T) {
	n := startNATS(t)
	dsn := n.bucket(t, "shedlock-locks") + "?x-preset=shedlock"
	r := runCmd(t, false, nil, "pause", "cleanup.job", "--dsn", dsn, "--create", "--for", "1h", "--yes")
	if r.err != nil {
		t.Fatalf("pause: %v %s", r.err, r.stderr)
	}
	nc, err := natsgo.Connect("nats://" + n.addr())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	kv, err := js.KeyValue(context.Background(), "shedlock-locks")
	if err != nil {
		t.Fatal(err)
	}
	e, err := kv.Get(context.Background(), "cleanup.job")
	if err != nil || len(e.Value()) != 8 {
		t.Fatalf("the pause's key: %v %v, want ShedLock's 8-byte value", e, err)
	}
	if end := time.UnixMilli(int64(binaryBigEndian(e.Value()))); end.Before(time.Now().Add(59 * time.Minute)) {
		t.Errorf("ShedLock reads the pause as ending at %s, want an hour from now", end)
	}
	r = runCmd(t, false, nil, "run", "--dsn", dsn, "--name", "cleanup.job", "--", "true")
	if r.err == nil || !strings.Contains(r.err.Error(), "is paused by") {
		t.Errorf("run of a paused job: %v, want it skipped as paused", r.err)
	}
	r = runCmd(t, false, nil, "resume", "cleanup.job", "--dsn", dsn, "--yes")
	if r.err != nil {
		t.Fatalf("resume: %v %s", r.err, r.stderr)
	}
	if _, err := kv.Get(context.Background(), "cleanup.job"); err == nil {
		t.Error("the key is still there after resume")
	}
}

// A bucket whose entries expire is refused by run in one line with exit
// 2, nothing written; an unreachable server is one line with exit 1.
func TestNATSBadInput(t *testing.T) {
	n := startNATS(t)
	nc, err := natsgo.Connect("nats://" + n.addr())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	kv, err := js.CreateKeyValue(context.Background(), jetstream.KeyValueConfig{Bucket: "expiring", TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	r := runCmd(t, false, nil, "run", "-q", "--dsn", "nats://"+n.addr()+"/expiring", "--name", "job", "--", "true")
	if ExitCode(r.err) != CodeUsage || r.err == nil || strings.Contains(r.err.Error(), "\n") || !strings.Contains(r.err.Error(), "TTL") {
		t.Errorf("run on a bucket with a TTL: exit %d, %v; want exit %d and one line naming the TTL", ExitCode(r.err), r.err, CodeUsage)
	}
	if st, _ := kv.Status(context.Background()); st.Values() != 0 {
		t.Errorf("the refused run wrote %d values", st.Values())
	}
	n.stop()
	r = runCmd(t, false, nil, "run", "-q", "--dsn", "nats://"+n.addr()+"/locks?dial-timeout=1s", "--name", "job", "--", "true")
	if ExitCode(r.err) != CodeError || r.err == nil || strings.Contains(r.err.Error(), "\n") {
		t.Errorf("run on a stopped server: exit %d, %v; want exit %d in one line", ExitCode(r.err), r.err, CodeError)
	}
}

func binaryBigEndian(b []byte) uint64 {
	var v uint64
	for _, c := range b {
		v = v<<8 | uint64(c)
	}
	return v
}
