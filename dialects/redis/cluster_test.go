package redis_test

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/redis"
)

// A DSN naming one node of a Redis Cluster (here a cluster of one
// redis-server of the test's own, serving every slot) is opened as a
// Cluster client: detect says cluster, locks work across slots, the
// listing scans every master, and names with braces stay exact.
func TestClusterNode(t *testing.T) {
	liveDSN(t)
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatalf("the cluster test needs redis-server: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	_, port, _ := net.SplitHostPort(addr)
	dir := t.TempDir()
	cmd := exec.Command(bin, "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir,
		"--cluster-enabled", "yes", "--cluster-config-file", dir+"/nodes.conf")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := goredis.NewClient(&goredis.Options{Addr: addr})
	defer c.Close()
	for c.Ping(ctx).Err() != nil {
		if ctx.Err() != nil {
			t.Fatal("the cluster node did not start")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := c.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", 0, 16383).Err(); err != nil {
		t.Fatal(err)
	}
	for {
		info, _ := c.ClusterInfo(ctx).Result()
		if strings.Contains(info, "cluster_state:ok") {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("cluster state never ok:\n%s", info)
		}
		time.Sleep(50 * time.Millisecond)
	}

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
	names := []string{"nightly", "a{b}c", "{tag}", "}{", "x%7By"}
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
}
