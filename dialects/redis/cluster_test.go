package redis_test

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/dialecttest"
	"github.com/schedlock/schedlock/dialects/redis"
	"github.com/schedlock/schedlock/internal/testnet"
)

// ownCluster starts a Redis Cluster of n masters of the test's own on
// free loopback ports, the 16,384 slots split evenly between them, and
// returns their addresses once every node says cluster_state:ok.
func ownCluster(t *testing.T, n int) []string {
	t.Helper()
	addrs, buses := make([]string, n), make([]int, n)
	for i := range addrs {
		bus := testnet.FreePort(t)
		port, _, _ := ownServerArgs(t, "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
			"--cluster-port", fmt.Sprint(bus), "--cluster-node-timeout", "5000")
		addrs[i], buses[i] = fmt.Sprintf("127.0.0.1:%d", port), bus
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	clients := make([]*goredis.Client, n)
	for i, a := range addrs {
		clients[i] = goredis.NewClient(&goredis.Options{Addr: a})
		defer clients[i].Close()
		lo, hi := i*16384/n, (i+1)*16384/n-1
		if err := clients[i].Do(ctx, "CLUSTER", "ADDSLOTSRANGE", lo, hi).Err(); err != nil {
			t.Fatal(err)
		}
		if i > 0 {
			host, port, _ := net.SplitHostPort(a)
			if err := clients[0].Do(ctx, "CLUSTER", "MEET", host, port, buses[i]).Err(); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, c := range clients {
		for {
			info, _ := c.ClusterInfo(ctx).Result()
			if strings.Contains(info, "cluster_state:ok") && strings.Contains(info, fmt.Sprintf("cluster_known_nodes:%d", n)) {
				break
			}
			if ctx.Err() != nil {
				t.Fatalf("the cluster never became ok:\n%s", info)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return addrs
}

// A DSN naming one node of a three-master Redis Cluster of the test's own
// is opened as a Cluster client: detect says cluster, a lock whose slot
// another node serves (that node answers the seed's MOVED) is taken and
// refused like any other, the listing scans every master, and names with
// braces stay exact.
func TestClusterNode(t *testing.T) {
	liveDSN(t)
	addrs := ownCluster(t, 3)
	addr := addrs[0]
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	b, err := redis.Open(ctx, fmt.Sprintf("redis://%s/0", addr))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if m := b.Detected().Mode; m != redis.ModeCluster {
		t.Fatalf("mode %q, want cluster", m)
	}
	l, err := b.Locker(dialects.StrategyTable, dialects.Table{})
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"nightly", "a{b}c", "{tag}", "}{", "x%7By", "report", "billing", "cleanup", "backup"}
	for _, n := range names {
		lease, err := l.Acquire(ctx, n, dialects.Options{AtMost: time.Minute, Owner: "node-1"})
		if err != nil {
			t.Fatalf("acquire %q: %v", n, err)
		}
		if _, err := l.Acquire(ctx, n, dialects.Options{Owner: "node-2"}); err == nil {
			t.Fatalf("%q taken twice", n)
		}
		defer lease.Release(ctx)
	}
	listing, err := b.ListLocks(ctx, dialects.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, e := range listing.Locks {
		got[e.Name] = e.State == dialects.StateHeld && e.Owner == "node-1"
	}
	for _, n := range names {
		if !got[n] {
			t.Errorf("listing lacks %q held by node-1: %+v", n, listing.Locks)
		}
	}

	// The names' keys are on every master, so some were answered by a
	// node the DSN did not name.
	seed := goredis.NewClient(&goredis.Options{Addr: addr})
	defer seed.Close()
	nodes := map[int]bool{}
	for _, n := range names {
		slot, err := seed.ClusterKeySlot(ctx, redisKey(n)).Result()
		if err != nil {
			t.Fatal(err)
		}
		node := slotNode(slot, len(addrs))
		nodes[node] = true
		// The seed itself refuses a key of another node's slot: MOVED.
		if node != 0 {
			if err := seed.Get(ctx, redisKey(n)).Err(); err == nil || !strings.HasPrefix(err.Error(), "MOVED") {
				t.Errorf("the seed answered %v for a key of another node's slot, want MOVED", err)
			}
		}
	}
	if len(nodes) != 3 {
		t.Errorf("the names' keys are on %d of the 3 masters; pick names that spread", len(nodes))
	}
}

// slotNode is the index of the node ownCluster gave slot to.
func slotNode(slot int64, n int) int {
	for i := range n {
		if slot <= int64((i+1)*16384/n-1) {
			return i
		}
	}
	return n - 1
}

// redisKey is the native layout's key of name under the default prefix,
// as docs/backends.md gives it (braces percent-encoded).
func redisKey(name string) string {
	return "schedlock:{" + strings.NewReplacer("%", "%25", "{", "%7B", "}", "%7D").Replace(name) + "}"
}

// TestClusterConformance runs the lock contract's suite on a three-master
// Cluster, the DSN naming every node.
func TestClusterConformance(t *testing.T) {
	liveDSN(t)
	addrs := ownCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b, err := redis.Open(ctx, "redis://"+strings.Join(addrs, ","))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if m := b.Detected().Mode; m != redis.ModeCluster {
		t.Fatalf("mode %q, want cluster", m)
	}
	dialecttest.Run(t, b, dialecttest.Options{Tables: []dialects.Table{
		{Preset: dialects.PresetSchedlock, Name: "schedlock_cluster"},
		{Preset: dialects.PresetShedlock, Name: "cluster"},
	}, AllowRisks: append(throwaway, dialects.RiskAsyncReplication)})
}

// A lock held while its slot moves to another master (the steps of
// redis-cli --cluster reshard: IMPORTING, MIGRATING, MIGRATE of its keys,
// SETSLOT NODE) stays its holder's: a refresh in the middle of the move
// (the key already on the new node, the old one answering ASK) and after
// it (MOVED) succeeds, another owner is refused, the release works, and the
// token counter moved with the lock, so the next token is higher.
func TestClusterReshardKeepsTheLock(t *testing.T) {
	liveDSN(t)
	addrs := ownCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	b, err := redis.Open(ctx, "redis://"+strings.Join(addrs, ",")+"/0")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	l, err := b.Locker(dialects.StrategyTable, dialects.Table{})
	if err != nil {
		t.Fatal(err)
	}
	lease, err := l.Acquire(ctx, "report", dialects.Options{AtMost: time.Minute, Owner: "holder"})
	if err != nil {
		t.Fatal(err)
	}
	first, _ := lease.Token()

	nodes := make([]*goredis.Client, len(addrs))
	ids := make([]string, len(addrs))
	for i, a := range addrs {
		nodes[i] = goredis.NewClient(&goredis.Options{Addr: a})
		defer nodes[i].Close()
		if ids[i], err = nodes[i].Do(ctx, "CLUSTER", "MYID").Text(); err != nil {
			t.Fatal(err)
		}
	}
	slot, err := nodes[0].ClusterKeySlot(ctx, redisKey("report")).Result()
	if err != nil {
		t.Fatal(err)
	}
	src := slotNode(slot, len(addrs))
	dst := (src + 1) % len(addrs)
	must := func(c *goredis.Client, args ...any) {
		t.Helper()
		if err := c.Do(ctx, args...).Err(); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
	}
	must(nodes[dst], "CLUSTER", "SETSLOT", slot, "IMPORTING", ids[src])
	must(nodes[src], "CLUSTER", "SETSLOT", slot, "MIGRATING", ids[dst])
	keys, err := nodes[src].ClusterGetKeysInSlot(ctx, int(slot), 100).Result()
	if err != nil || len(keys) != 2 {
		t.Fatalf("keys in slot %d: %v, %v; want the lock and its token counter", slot, keys, err)
	}
	host, port, _ := strings.Cut(addrs[dst], ":")
	must(nodes[src], append([]any{"MIGRATE", host, port, "", 0, 5000, "KEYS"}, anys(keys)...)...)
	if err := lease.Refresh(ctx); err != nil {
		t.Fatalf("refresh while the slot moves (ASK): %v", err)
	}
	for _, i := range []int{dst, src, 3 - src - dst} {
		must(nodes[i], "CLUSTER", "SETSLOT", slot, "NODE", ids[dst])
	}
	if err := lease.Refresh(ctx); err != nil {
		t.Fatalf("refresh after the slot moved (MOVED): %v", err)
	}
	if _, err := l.Acquire(ctx, "report", dialects.Options{Owner: "other"}); err == nil {
		t.Fatal("another owner took the lock after the slot moved")
	}
	if n, err := nodes[dst].Exists(ctx, redisKey("report")).Result(); err != nil || n != 1 {
		t.Fatalf("the lock key is not on the new node: %d, %v", n, err)
	}
	if err := lease.Release(ctx); err != nil {
		t.Fatalf("release after the slot moved: %v", err)
	}
	next, err := l.Acquire(ctx, "report", dialects.Options{AtMost: time.Minute, Owner: "other"})
	if err != nil {
		t.Fatal(err)
	}
	if second, _ := next.Token(); second <= first {
		t.Errorf("token %d after the slot moved is not above %d", second, first)
	}
	_ = next.Release(ctx)
}

func anys(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
