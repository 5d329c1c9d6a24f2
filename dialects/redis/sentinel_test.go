package redis_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/dialecttest"
	"github.com/schedlock/schedlock/dialects/redis"
	"github.com/schedlock/schedlock/internal/tcpproxy"
	"github.com/schedlock/schedlock/internal/testnet"
)

// TestSentinel opens a Redis of the test's own through a Sentinel of its
// own (redis://SENTINEL/0?master=NAME): the backend finds the master
// through the sentinel, detect says so, and the lock contract's suite
// passes on it.
func TestSentinel(t *testing.T) {
	port, _, _ := ownServer(t)
	sentinel := ownSentinel(t, port)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	b, err := redis.Open(ctx, fmt.Sprintf("redis://127.0.0.1:%d/0?master=jobs", sentinel))
	if err != nil {
		t.Fatalf("open through the sentinel: %v", err)
	}
	defer b.Close()
	if info := b.Detected(); info.Mode != "sentinel" {
		t.Errorf("mode %q, want sentinel", info.Mode)
	}
	dialecttest.Run(t, b, dialecttest.Options{Tables: []dialects.Table{{Preset: dialects.PresetSchedlock, Name: "schedlock_sentinel"}},
		AllowRisks: append(throwaway, dialects.RiskAsyncReplication)})
}

// ownSentinel starts a Sentinel on a free loopback port that monitors the
// master at 127.0.0.1:master as "jobs", and stops it at the end.
func ownSentinel(t *testing.T, master int) int {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatalf("the sentinel test needs redis-server: %v", err)
	}
	port := testnet.FreePort(t)
	dir := t.TempDir()
	conf := filepath.Join(dir, "sentinel.conf")
	text := fmt.Sprintf("port %d\nbind 127.0.0.1\ndir %s\nsentinel monitor jobs 127.0.0.1 %d 1\nsentinel down-after-milliseconds jobs 60000\n", port, dir, master)
	if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, conf, "--sentinel")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	c := goredis.NewSentinelClient(&goredis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", port)})
	defer c.Close()
	deadline := time.Now().Add(15 * time.Second)
	for {
		addr, err := c.GetMasterAddrByName(context.Background(), "jobs").Result()
		if err == nil && len(addr) == 2 {
			return port
		}
		if time.Now().After(deadline) {
			t.Fatalf("the sentinel did not name the master within 15s: %v %v", addr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// failoverRig is a master, a replica and a sentinel of the test's own,
// the backend opened through the sentinel, once the sentinel knows the
// replica and the replica has synced.
type failoverRig struct {
	ctx     context.Context
	sc      *goredis.SentinelClient
	replica int
	rc      *goredis.Client // the replica, directly
	l       dialects.Locker // through the sentinel
}

// newFailoverRig starts the rig; the replica replicates from upstream
// (the master's port, or a proxy's in front of it).
func newFailoverRig(t *testing.T, ctx context.Context, master, upstream int) *failoverRig {
	t.Helper()
	replica, _, _ := ownServerArgs(t, "--replicaof", "127.0.0.1", fmt.Sprint(upstream))
	sentinel := ownSentinel(t, master)
	r := &failoverRig{ctx: ctx, replica: replica}
	r.sc = goredis.NewSentinelClient(&goredis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", sentinel)})
	t.Cleanup(func() { _ = r.sc.Close() })
	waitFor(ctx, t, "the sentinel to see the replica", func() bool {
		rs, err := r.sc.Replicas(ctx, "jobs").Result()
		return err == nil && len(rs) == 1 && rs[0]["flags"] == "slave"
	})
	mc := goredis.NewClient(&goredis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", master)})
	defer mc.Close()
	waitFor(ctx, t, "the replica to finish its first sync", func() bool {
		info, err := mc.Info(ctx, "replication").Result()
		return err == nil && strings.Contains(info, "state=online")
	})
	r.rc = goredis.NewClient(&goredis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", replica)})
	t.Cleanup(func() { _ = r.rc.Close() })
	b, err := redis.Open(ctx, fmt.Sprintf("redis://127.0.0.1:%d/0?master=jobs", sentinel))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	if r.l, err = b.Locker(dialects.StrategyTable, dialects.Table{}); err != nil {
		t.Fatal(err)
	}
	return r
}

// failover forces a failover and waits until the sentinel names the
// replica as master and the replica says so.
func (r *failoverRig) failover(t *testing.T) {
	t.Helper()
	if err := r.sc.Failover(r.ctx, "jobs").Err(); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprint(r.replica)
	waitFor(r.ctx, t, "the sentinel to name the replica as master", func() bool {
		addr, err := r.sc.GetMasterAddrByName(r.ctx, "jobs").Result()
		return err == nil && len(addr) == 2 && addr[1] == want
	})
	waitFor(r.ctx, t, "the replica to be master", func() bool {
		role, err := r.rc.Do(r.ctx, "ROLE").Slice()
		return err == nil && len(role) > 0 && role[0] == "master"
	})
}

// TestSentinelFailover: a lock taken through a Sentinel survives a
// failover to a replica that had received it. The backend follows the
// sentinel to the new master; there the lock is still held by its owner
// (another owner is refused), the holder's refresh and release work, and
// the next acquire's token is above the first's.
func TestSentinelFailover(t *testing.T) {
	master, _, _ := ownServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	r := newFailoverRig(t, ctx, master, master)
	lease, err := r.l.Acquire(ctx, "nightly", dialects.Options{Owner: "node-1", AtMost: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	first, _ := lease.Token()
	waitFor(ctx, t, "the replica to receive the lock", func() bool {
		v, err := r.rc.Get(ctx, "schedlock:{nightly}").Result()
		return err == nil && strings.HasSuffix(v, " node-1")
	})
	r.failover(t)
	// The client may still hold a connection to the old master, now a
	// replica that refuses writes, until it learns of the switch.
	waitFor(ctx, t, "the holder's refresh on the new master", func() bool { return lease.Refresh(ctx) == nil })
	if v, err := r.rc.Get(ctx, "schedlock:{nightly}").Result(); err != nil || !strings.HasSuffix(v, " node-1") {
		t.Fatalf("the new master holds %q (%v), want node-1's lock", v, err)
	}
	if _, err := r.l.Acquire(ctx, "nightly", dialects.Options{Owner: "node-2"}); !errors.Is(err, dialects.ErrHeld) {
		t.Fatalf("another owner after the failover: %v, want ErrHeld", err)
	}
	if err := lease.Release(ctx); err != nil {
		t.Fatal(err)
	}
	next, err := r.l.Acquire(ctx, "nightly", dialects.Options{Owner: "node-2", AtMost: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer next.Release(ctx)
	if tok, _ := next.Token(); tok <= first {
		t.Fatalf("token %d after the failover, not above %d", tok, first)
	}
}

// waitFor polls cond until it holds, failing the test when ctx ends.
func waitFor(ctx context.Context, t *testing.T, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		if ctx.Err() != nil {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestSentinelFailoverLosesAnUnreplicatedLock stages what docs/backends.md
// warns of: the replica reaches its master through a proxy of the test's
// own, which holds the replication stream back while node-1 takes the
// lock, so the replica is promoted without it. The new master has no key;
// node-1 learns at its next refresh that its lease is lost (until then it
// believes it holds the lock); node-2 takes the lock meanwhile — two
// holders, which only a fencing token checked by the resource can tell
// apart. The token counter went back with the data, yet node-2's token
// is above node-1's: the new master's clock (the same host's here) is
// the token's floor.
func TestSentinelFailoverLosesAnUnreplicatedLock(t *testing.T) {
	master, _, _ := ownServer(t)
	link, err := tcpproxy.Start(fmt.Sprintf("127.0.0.1:%d", master))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = link.Close() })
	t.Cleanup(link.Restore)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	r := newFailoverRig(t, ctx, master, link.Port())
	// A first acquire the replica does receive: the counter's base.
	warm, err := r.l.Acquire(ctx, "nightly", dialects.Options{Owner: "node-0", AtMost: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if err := warm.Release(ctx); err != nil {
		t.Fatal(err)
	}
	base, _ := warm.Token()
	waitFor(ctx, t, "the replica to receive the first lock and its release", func() bool {
		n, err := r.rc.Get(ctx, "schedlock:{nightly}:token").Int64()
		gone, _ := r.rc.Exists(ctx, "schedlock:{nightly}").Result()
		return err == nil && n == base && gone == 0
	})

	link.Stall()
	lease, err := r.l.Acquire(ctx, "nightly", dialects.Options{Owner: "node-1", AtMost: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	lost, _ := lease.Token()
	if n, _ := r.rc.Exists(ctx, "schedlock:{nightly}").Result(); n != 0 {
		t.Fatal("the replica received node-1's lock: the link should hold it back")
	}
	r.failover(t)
	if v, err := r.rc.Get(ctx, "schedlock:{nightly}").Result(); !errors.Is(err, goredis.Nil) {
		t.Fatalf("the new master holds %q (%v): the lock was replicated after all", v, err)
	}

	// Until its next refresh node-1 believes it holds the lock; node-2
	// takes it meanwhile.
	other, err := r.l.Acquire(ctx, "nightly", dialects.Options{Owner: "node-2", AtMost: time.Minute, Wait: 30 * time.Second, RetryEvery: 50 * time.Millisecond})
	if err != nil {
		t.Fatalf("node-2 after the failover: %v", err)
	}
	defer other.Release(ctx)
	if lease.Err() != nil {
		t.Fatalf("node-1 was told before its refresh: %v", lease.Err())
	}
	if tok, _ := other.Token(); tok <= lost {
		t.Errorf("node-2's token %d, not above node-1's %d: the token does not fence across the failover", tok, lost)
	}
	var refreshErr error
	waitFor(ctx, t, "node-1's refresh to find its lease lost", func() bool {
		refreshErr = lease.Refresh(ctx) // the old master, now a replica, answers READONLY first
		return errors.Is(refreshErr, dialects.ErrLeaseLost)
	})
	select {
	case <-lease.Done():
	default:
		t.Errorf("node-1's lease is not done after the refresh found it lost: %v", refreshErr)
	}
	t.Logf("node-1's refresh: %v", refreshErr)
}
