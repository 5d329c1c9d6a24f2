package redis_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/dialecttest"
	"github.com/schedlock/schedlock/dialects/redis"
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
	dialecttest.Run(t, b, dialecttest.Options{Tables: []dialects.Table{{Preset: dialects.PresetSchedlock, Name: "schedlock_sentinel"}}})
}

// ownSentinel starts a Sentinel on a free loopback port that monitors the
// master at 127.0.0.1:master as "jobs", and stops it at the end.
func ownSentinel(t *testing.T, master int) int {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatalf("the sentinel test needs redis-server: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	_ = ln.Close()
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
