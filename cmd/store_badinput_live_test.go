//go:build unix

package cmd

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/schedlock/schedlock/checks"
	"github.com/schedlock/schedlock/dialects/redis"
	"github.com/schedlock/schedlock/dialects/zookeeper"
	"github.com/schedlock/schedlock/internal/dsn"
)

// refusedStoreRun runs `run` with args on a command that would leave a
// file, with a lease that would outlive the run (--at-least 1h), and
// fails t unless run exits 2 in one line saying want and the command did
// not run. It returns so that the caller checks the store (and clears
// what a wrongly accepted run left) either way.
func refusedStoreRun(t *testing.T, want string, args ...string) {
	t.Helper()
	ran := filepath.Join(t.TempDir(), "ran")
	args = append(append([]string{"run", "--name", "job", "--at-most", "2h", "--at-least", "1h"}, args...), "--", "touch", ran)
	r := runCmd(t, false, nil, args...)
	if code := ExitCode(r.err); code != CodeUsage {
		t.Errorf("%.200s: exit %d (%v), want %d", strings.Join(args, " "), code, r.err, CodeUsage)
	} else if msg := r.err.Error(); !strings.Contains(msg, want) || strings.Contains(msg, "\n") {
		t.Errorf("error %q: want one line saying %q", msg, want)
	}
	if _, err := os.Stat(ran); err == nil {
		t.Error("the command ran")
	}
}

// Redis options that go-redis would take in another sense — an empty
// master name (one server instead of Sentinel), a time-out of 0 or below
// (no time-out at all), a negative or unreadable duration — are a bad DSN:
// exit 2, and no key is written under the run's key prefix.
func TestRedisBadOptionsWriteNothing(t *testing.T) {
	onEachStore(t, []string{"redis"}, func(t *testing.T, _, raw string) {
		d, err := dsn.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		b, err := d.Connect(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = b.Close() })
		client := b.(*redis.Backend).Client()
		table := checks.NewPrefix()
		keys := func(ctx context.Context) []string {
			var out []string
			iter := client.Scan(ctx, 0, table+"*", 100).Iterator()
			for iter.Next(ctx) {
				out = append(out, iter.Val())
			}
			if err := iter.Err(); err != nil {
				t.Fatal(err)
			}
			return out
		}
		t.Cleanup(func() {
			for _, k := range keys(context.Background()) {
				client.Del(context.Background(), k)
			}
		})
		sep := "?"
		if strings.Contains(raw, "?") {
			sep = "&"
		}
		for _, tc := range []struct{ option, want string }{
			{"master=", "master= is empty: name the master the sentinels monitor"},
			{"master_name=", "master_name= is empty"},
			{"read_timeout=-1s", `read_timeout="-1s" is not a positive duration`},
			{"read_timeout=0", `read_timeout="0" is not a positive duration`},
			{"read_timeout=soon", `read_timeout="soon" is not a duration`},
			{"dial_timeout=-1", `dial_timeout="-1" is not a positive duration`},
			{"write_timeout=-500ms", `write_timeout="-500ms" is not a positive duration`},
			{"pool_timeout=0s", `pool_timeout="0s" is not a positive duration`},
			{"conn_max_idle_time=-1m", `conn_max_idle_time="-1m" is negative`},
			{"max_retry_backoff=-1s", `max_retry_backoff="-1s" is negative`},
		} {
			t.Run(tc.option, func(t *testing.T) {
				refusedStoreRun(t, tc.want, "--dsn", raw+sep+tc.option+"&x-table="+table)
				if got := keys(ctx); len(got) != 0 {
					t.Errorf("keys written under %s: %q", table, got)
				}
			})
		}
	})
}

// An etcd prefix holding a NUL byte or another control character, or
// bytes that are not UTF-8, is a bad DSN: exit 2, and no key starting
// with those bytes is written.
func TestEtcdBadPrefixWritesNothing(t *testing.T) {
	onEachStore(t, []string{"etcd"}, func(t *testing.T, _, raw string) {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		cli := openEtcd(t, raw).Client()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		count := func(prefix string) int64 {
			resp, err := cli.Get(ctx, prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
			if err != nil {
				t.Fatal(err)
			}
			return resp.Count
		}
		tag := strings.TrimPrefix(checks.NewPrefix(), "schedlock_selfcheck_")
		for _, tc := range []struct{ path, key, want string }{
			{"%00", "\x00", `the etcd prefix "\x00" holds a control character`},
			{tag + "%00/jobs", tag + "\x00", "holds a control character"},
			{tag + "%01", tag + "\x01", "holds a control character"},
			{tag + "%0A", tag + "\n", "holds a control character"},
			{"%ff%fe", "\xff\xfe", `the etcd prefix "\xff\xfe" is not valid UTF-8`},
			{tag + "%C3", tag + "\xc3", "is not valid UTF-8"},
		} {
			t.Run(tc.path, func(t *testing.T) {
				before := count(tc.key)
				refusedStoreRun(t, tc.want, "--dsn", "etcd://"+u.Host+"/"+tc.path)
				if after := count(tc.key); after != before {
					// Only a wrongly accepted prefix puts keys there.
					_, _ = cli.Delete(context.Background(), tc.key, clientv3.WithPrefix())
					t.Errorf("keys starting with %q: %d before the run, %d after", tc.key, before, after)
				}
			})
		}
	})
}

// ZooKeeper keeps /zookeeper for itself: a chroot equal to it or under it,
// or the table node "zookeeper" at the root, is refused (exit 2) and
// nothing is created in it, by run --create-table as by locks ls. A
// chroot holding a NUL byte, another control character or bytes that are
// not UTF-8 is a bad DSN too (exit 2), not a failed connection.
func TestZooKeeperReservedAndBadPathsWriteNothing(t *testing.T) {
	onEachStore(t, []string{"zookeeper"}, func(t *testing.T, _, raw string) {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		b, err := zookeeper.Open(ctx, "zk://"+u.Host)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = b.Close() })
		conn := b.ReadConn()
		tree := func() []string {
			var out []string
			var walk func(p string)
			walk = func(p string) {
				children, _, err := conn.Children(p)
				if err != nil {
					t.Fatal(err)
				}
				for _, c := range children {
					out = append(out, p+"/"+c)
					walk(p + "/" + c)
				}
			}
			walk(zookeeper.ReservedPath)
			slices.Sort(out)
			return out
		}
		before := tree()
		host := "zk://" + u.Host
		table := checks.NewPrefix()
		for _, tc := range []struct {
			what, want string
			args       []string
		}{
			{"chroot /zookeeper", `zookeeper chroot "/zookeeper" is in /zookeeper, which ZooKeeper keeps for itself`, []string{"--dsn", host + "/zookeeper", "--create-table"}},
			{"chroot /zookeeper/", `zookeeper chroot "/zookeeper" is in /zookeeper`, []string{"--dsn", host + "/zookeeper/", "--create-table"}},
			{"chroot under /zookeeper", "is in /zookeeper, which ZooKeeper keeps for itself", []string{"--dsn", host + "/zookeeper/" + table, "--create-table"}},
			{"chroot /zookeeper/quota", "is in /zookeeper", []string{"--dsn", host + "/zookeeper/quota", "--create-table"}},
			{"table zookeeper", "table node /zookeeper is in /zookeeper, which ZooKeeper keeps for itself", []string{"--dsn", host, "--table", "zookeeper", "--create-table"}},
			{"x-table=zookeeper", "table node /zookeeper is in /zookeeper", []string{"--dsn", host + "?x-table=zookeeper", "--create-table"}},
			{"chroot with a NUL byte", `zookeeper chroot "/\x00" holds a control character`, []string{"--dsn", host + "/%00", "--create-table"}},
			{"chroot with a control character", "holds a control character", []string{"--dsn", host + "/" + table + "%01", "--create-table"}},
			{"chroot not UTF-8", "is not valid UTF-8", []string{"--dsn", host + "/%ff", "--create-table"}},
		} {
			t.Run(tc.what, func(t *testing.T) {
				refusedStoreRun(t, tc.want, tc.args...)
				if after := tree(); !slices.Equal(after, before) {
					t.Errorf("nodes under /zookeeper: %q before the run, %q after", before, after)
					for _, p := range after {
						if !slices.Contains(before, p) {
							deleteTree(conn, p)
						}
					}
				}
			})
		}
		for _, dsn := range []string{host + "/zookeeper", host + "?x-table=zookeeper"} {
			r := runCmd(t, false, nil, "locks", "ls", "--dsn", dsn)
			if code := ExitCode(r.err); code != CodeUsage || !strings.Contains(r.err.Error(), "is in /zookeeper") {
				t.Errorf("locks ls --dsn %s: exit %d (%v), want %d", dsn, code, r.err, CodeUsage)
			}
		}
	})
}

// deleteTree deletes the node p and everything under it, as far as it
// can: it clears what a wrongly accepted run created.
func deleteTree(conn *zk.Conn, p string) {
	children, _, err := conn.Children(p)
	if err != nil {
		return
	}
	for _, c := range children {
		deleteTree(conn, p+"/"+c)
	}
	_ = conn.Delete(p, -1)
}
