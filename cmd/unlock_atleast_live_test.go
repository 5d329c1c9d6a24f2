//go:build unix

package cmd

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/checks"
	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/internal/dsn"
	"github.com/schedlock/schedlock/internal/livetest"
)

// liveStores are the stores and the variables of their live DSNs.
var liveStores = []struct{ name, env string }{
	{"redis", "SCHEDLOCK_TEST_REDIS_DSN"},
	{"etcd", "SCHEDLOCK_TEST_ETCD_DSN"},
	{"zookeeper", "SCHEDLOCK_TEST_ZK_DSN"},
}

// onEachStore runs f as a subtest on each live store named in only (all
// when empty), skipping one whose DSN variable is unset.
func onEachStore(t *testing.T, only []string, f func(t *testing.T, store, dsn string)) {
	for _, store := range liveStores {
		if len(only) > 0 && !slices.Contains(only, store.name) {
			continue
		}
		t.Run(store.name, func(t *testing.T) {
			dsn := livetest.DSN(t, store.env)
			f(t, store.name, dsn)
		})
	}
}

// storeTable is a new lock table (a key prefix) on the store dsn names,
// dropped with every key under it, token counters included, when the
// test ends.
func storeTable(t *testing.T, raw string) string {
	t.Helper()
	table := checks.NewPrefix()
	d, err := dsn.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b, err := d.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	l, err := b.Locker(dialects.StrategyTable, dialects.Table{Name: table})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if d, ok := l.(dialects.TableDropper); ok {
			_ = d.DropTable(context.Background())
		}
	})
	return table
}

// TestUnlockOwnerDuringAtLeast: on every store, `unlock NAME --owner O`
// frees a lock O released and its at-least still keeps, as --dry-run
// says it would, and the next run then gets the lock.
func TestUnlockOwnerDuringAtLeast(t *testing.T) {
	onEachStore(t, nil, func(t *testing.T, store, dsn string) {
		flags := []string{"--dsn", dsn, "--table", storeTable(t, dsn)}
		r := runCmd(t, false, nil, append(append([]string{"run", "--name", "kept", "--owner", "ops-a", "--at-most", "1m", "--at-least", "50s", "--create-table"}, flags...), "--", "true")...)
		if r.err != nil {
			t.Fatalf("run: %v\n%s", r.err, r.stderr)
		}
		if got := memoryLocks(t, append([]string{"--name", "kept"}, flags...)...); len(got) != 1 || got[0].State != "held" || got[0].Owner != "ops-a" {
			t.Fatalf("locks ls during the at-least: %+v", got)
		}
		r = runCmd(t, false, nil, append([]string{"unlock", "kept", "--owner", "ops-b", "--yes"}, flags...)...)
		if code := ExitCode(r.err); code != CodeNegative {
			t.Fatalf("unlock --owner ops-b: exit %d (%v), want %d", code, r.err, CodeNegative)
		}
		for _, extra := range [][]string{{"--dry-run"}, {"--yes"}} {
			r = runCmd(t, false, nil, append(append([]string{"unlock", "kept", "--owner", "ops-a"}, extra...), flags...)...)
			if r.err != nil {
				t.Fatalf("unlock --owner ops-a %v: %v\n%s", extra, r.err, r.stderr)
			}
		}
		if got := memoryLocks(t, append([]string{"--name", "kept", "--state", "held"}, flags...)...); len(got) != 0 {
			t.Fatalf("locks ls after unlock: %+v", got)
		}
		r = runCmd(t, false, nil, append(append([]string{"run", "--name", "kept", "--owner", "ops-c", "--skipped-exit-code", "99"}, flags...), "--", "true")...)
		if r.err != nil {
			t.Fatalf("run after unlock: %v\n%s", r.err, r.stderr)
		}
	})
}

// TestStorePreviewMatchesTheChange: on every store, what `unlock
// --dry-run` and (Redis) `resume --dry-run` say the lock will be is what
// the change leaves: free, with no owner — not an expired lease.
func TestStorePreviewMatchesTheChange(t *testing.T) {
	onEachStore(t, nil, func(t *testing.T, store, dsn string) {
		flags := []string{"--dsn", dsn, "--table", storeTable(t, dsn), "-o", "json"}
		r := runCmd(t, false, nil, append(append([]string{"run", "--name", "kept", "--owner", "ops-a", "--at-most", "1m", "--at-least", "50s", "--create-table"}, flags[:4]...), "--", "true")...)
		if r.err != nil {
			t.Fatalf("run: %v\n%s", r.err, r.stderr)
		}
		assertPreviewMatches(t, append([]string{"unlock", "kept", "--owner", "ops-a"}, flags...))
		if store != "redis" {
			return
		}
		if r := runCmd(t, false, nil, append([]string{"pause", "kept", "--for", "1h", "--create", "--yes"}, flags...)...); r.err != nil {
			t.Fatalf("pause: %v", r.err)
		}
		assertPreviewMatches(t, append([]string{"resume", "kept"}, flags...))
	})
}

// assertPreviewMatches runs args with --dry-run, then with --yes, and
// compares the state each reports after the change (null: no row left,
// which is free too).
func assertPreviewMatches(t *testing.T, args []string) {
	t.Helper()
	after := func(extra string) (state, owner string) {
		r := runCmd(t, false, nil, append(args, extra)...)
		if r.err != nil {
			t.Fatalf("%v %s: %v\n%s", args[:2], extra, r.err, r.stderr)
		}
		var v struct {
			After *struct{ State, Owner string }
		}
		if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
			t.Fatalf("%v %s: %v\n%s", args[:2], extra, err, r.stdout)
		}
		if v.After == nil {
			return "free", ""
		}
		return v.After.State, v.After.Owner
	}
	ps, po := after("--dry-run")
	rs, ro := after("--yes")
	if ps != rs || po != ro || rs != "free" {
		t.Errorf("%v: preview after %s/%q, real after %s/%q; want both free with no owner", args[:2], ps, po, rs, ro)
	}
}

// TestStoresRefuseShedlockPreset: etcd and ZooKeeper have one key layout,
// so --preset shedlock is bad input (exit 2) for every admin command, as
// for run.
func TestStoresRefuseShedlockPreset(t *testing.T) {
	onEachStore(t, []string{"etcd", "zookeeper"}, func(t *testing.T, store, dsn string) {
		for _, args := range [][]string{
			{"locks", "ls"},
			{"unlock", "nightly", "--force", "--yes"},
			{"pause", "nightly", "--for", "1h", "--yes"},
			{"run", "--name", "nightly"},
		} {
			full := append(args, "--dsn", dsn, "--preset", "shedlock")
			if args[0] == "run" {
				full = append(full, "--", "true")
			}
			r := runCmd(t, false, nil, full...)
			if code := ExitCode(r.err); code != CodeUsage || !strings.Contains(r.err.Error(), "layout") {
				t.Errorf("%v --preset shedlock: exit %d (%v), want %d naming the one layout", args[:2], code, r.err, CodeUsage)
			}
		}
	})
}

// TestStoresRecommendNoClaims: detect on a store recommends no claim
// strategy (it has no task rows), saying claims need a SQL database.
func TestStoresRecommendNoClaims(t *testing.T) {
	onEachStore(t, nil, func(t *testing.T, store, dsn string) {
		r := runCmd(t, false, nil, "detect", "--dsn", dsn, "-o", "json")
		if r.err != nil {
			t.Fatal(r.err)
		}
		var doc struct {
			Recommended struct {
				ClaimStrategy *string `json:"claim_strategy"`
				ClaimReason   string  `json:"claim_reason"`
				Reason        string
			}
		}
		if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
			t.Fatal(err)
		}
		rec := doc.Recommended
		if rec.ClaimStrategy == nil || *rec.ClaimStrategy != "" || !strings.Contains(rec.ClaimReason, "claims need a SQL database") || !strings.Contains(rec.Reason, "no claims:") {
			t.Errorf("recommended %+v: want no claim strategy, and why", rec)
		}
	})
}
