//go:build unix

package e2e

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// envRedis names the live Redis server; unset skips its tests.
const envRedis = "SCHEDLOCK_TEST_REDIS_DSN"

// staleBackends are the lease backends whose holders refresh: the SQL
// tables of allBackends and Redis.
var staleBackends = []backendCase{
	{"postgres/table", func(t *testing.T) backend { return newBackend(t, liveDSN(t, envPostgres), dialects.StrategyTable) }},
	{"mysql/table", func(t *testing.T) backend { return newBackend(t, liveDSN(t, envMySQL), dialects.StrategyTable) }},
	{"sqlite/table", func(t *testing.T) backend { return newBackend(t, sqliteDSN(t), dialects.StrategyTable) }},
	{"redis/table", func(t *testing.T) backend {
		return backend{name: "redis/table", dsn: liveDSN(t, envRedis), strategy: dialects.StrategyTable, table: "e2e_stale_" + randomHex(4)}
	}},
}

// listedLock is the part of `locks ls -o json` these tests read.
type listedLock struct {
	Name        string  `json:"name"`
	State       string  `json:"state"`
	Owner       string  `json:"owner"`
	LockUntil   string  `json:"lock_until"`
	StaleReason *string `json:"stale_reason"`
	LastRefresh *string `json:"last_refresh"`
	Every       float64 `json:"refresh_every_seconds"`
}

// listLock is name as `locks ls` shows it.
func listLock(t *testing.T, dir string, b backend, name string) listedLock {
	t.Helper()
	r := runOnce(t, dir, "locks", "ls", "-o", "json", "--all", "--dsn", b.dsn, "--table", b.table, "--name", name)
	if r.code != 0 {
		t.Fatalf("locks ls: exit %d; stderr: %s", r.code, r.stderr.String())
	}
	var locks []listedLock
	if err := json.Unmarshal([]byte(r.stdout.String()), &locks); err != nil {
		t.Fatalf("locks ls -o json: %v\n%s", err, r.stdout.String())
	}
	if len(locks) != 1 {
		t.Fatalf("locks ls --name %s: %d locks\n%s", name, len(locks), r.stdout.String())
	}
	return locks[0]
}

// A holder killed with SIGKILL leaves its lease behind. On this host its
// process is gone, so the lock is stale at once; its heartbeat — every
// third of --at-most — is overdue two intervals after its last refresh,
// which is what another host sees, and both come while the lease still
// runs (a stale lock's lease has not ended: the state is the database
// clock's judgement). unlock frees it without --force and the next run
// acquires, long before the lease would have ended; a live holder's lock
// still needs --force.
func TestRunKilledHolderIsStale(t *testing.T) {
	const atMost = 30 * time.Second // refreshed every 10s
	for _, bc := range staleBackends {
		t.Run(bc.name, func(t *testing.T) {
			t.Parallel()
			b := bc.make(t)
			dir := t.TempDir()
			name := lockName("stale")
			lease := []string{"--at-most", atMost.String(), "--kill-grace", "1s"}
			r, child := startHolder(t, dir, runArgs(b, name, holdScript, lease...))
			if l := listLock(t, dir, b, name); l.State != "held" || l.Every != 10 || l.LastRefresh == nil {
				t.Fatalf("running holder listed as %+v, want held with a refresh every 10s", l)
			}
			crash(t, r, child)
			killed := time.Now()

			l := listLock(t, dir, b, name)
			if l.State != "stale" || l.StaleReason == nil || !strings.Contains(*l.StaleReason, "owner process") {
				t.Fatalf("killed holder listed as %+v, want stale: owner process gone", l)
			}
			// Wait for the heartbeat to be overdue, as on another host.
			for l.StaleReason != nil && !strings.Contains(*l.StaleReason, "no refresh for") {
				if l.State != "stale" {
					t.Fatalf("before its heartbeat was overdue the lock became %s: %+v", l.State, l)
				}
				if time.Since(killed) > 2*atMost {
					t.Fatalf("heartbeat not overdue %s after the kill: %+v", time.Since(killed), l)
				}
				time.Sleep(200 * time.Millisecond)
				l = listLock(t, dir, b, name)
			}
			if l.State != "stale" {
				t.Fatalf("heartbeat overdue but state %s: %+v", l.State, l)
			}
			t.Logf("%s: heartbeat overdue %s after the kill (%s); lease until %s", b.name, time.Since(killed).Round(time.Millisecond), *l.StaleReason, l.LockUntil)

			table := []string{"--dsn", b.dsn, "--table", b.table}
			if u := runOnce(t, dir, append([]string{"unlock", name, "--yes"}, table...)...); u.code != 0 {
				t.Fatalf("unlock of a stale lock without --force: exit %d; stderr: %s", u.code, u.stderr.String())
			}
			if next := runOnce(t, dir, runArgs(b, name, "true")...); next.code != 0 {
				t.Fatalf("run after unlocking the stale lock: exit %d; stderr: %s", next.code, next.stderr.String())
			}

			// A live holder's lock still needs --force.
			live := lockName("live")
			startHolder(t, t.TempDir(), runArgs(b, live, holdScript, lease...))
			if l := listLock(t, dir, b, live); l.State != "held" {
				t.Fatalf("live holder listed as %+v", l)
			}
			if u := runOnce(t, dir, append([]string{"unlock", live, "--yes"}, table...)...); u.code != 3 || !strings.Contains(u.stderr.String(), "--force") {
				t.Fatalf("unlock of a live lock without --force: exit %d, want 3; stderr: %s", u.code, u.stderr.String())
			}
		})
	}
}
