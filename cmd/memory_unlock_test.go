package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/memory"
)

// memoryStore opens a fresh memory store, creates its lock table of
// preset and returns its DSN and a locker on it.
func memoryStore(t *testing.T, preset string) (string, dialects.LeaseLocker) {
	t.Helper()
	name := "unlock-" + strings.ReplaceAll(dialects.NewOwner(), ":", "-")
	b, err := memory.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	tl, err := b.LeaseLocker(dialects.Table{Preset: preset})
	if err != nil {
		t.Fatal(err)
	}
	if err := tl.(dialects.TableCreator).CreateTable(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if d, ok := tl.(dialects.TableDropper); ok {
			_ = d.DropTable(context.Background())
		}
	})
	return "memory://" + name, tl
}

func acquireT(t *testing.T, l dialects.Locker, name, owner string) dialects.Lease {
	t.Helper()
	lease, err := l.Acquire(context.Background(), name, dialects.Options{Owner: owner, AtMost: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	return lease
}

func memoryLocks(t *testing.T, args ...string) []listedLock {
	t.Helper()
	r := runCmd(t, false, nil, append([]string{"locks", "ls", "-o", "json"}, args...)...)
	if r.err != nil {
		t.Fatalf("locks ls %v: %v\n%s", args, r.err, r.stderr)
	}
	var out []listedLock
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("locks ls -o json: %v\n%s", err, r.stdout)
	}
	return out
}

// TestMemoryLocksListPresets: locks ls reads a memory table in the layout
// it was created with, in another layout whose columns it has (a
// schedlock table as shedlock, without the token), and refuses a layout
// whose columns it lacks.
func TestMemoryLocksListPresets(t *testing.T) {
	dsn, tl := memoryStore(t, dialects.PresetSchedlock)
	defer acquireT(t, tl, "job", "host-a").Release(context.Background())

	own := memoryLocks(t, "--dsn", dsn)
	if len(own) != 1 || own[0].Name != "job" || own[0].Owner != "host-a" || own[0].State != "held" ||
		own[0].Preset != dialects.PresetSchedlock || own[0].Token == nil || *own[0].Token != 1 {
		t.Errorf("locks ls = %+v; want job held by host-a, schedlock, token 1", own)
	}
	asShed := memoryLocks(t, "--dsn", dsn, "--preset", dialects.PresetShedlock, "--table", "schedlock")
	if len(asShed) != 1 || asShed[0].Preset != dialects.PresetShedlock || asShed[0].Token != nil {
		t.Errorf("locks ls --preset shedlock = %+v; want job without a token", asShed)
	}
	r := runCmd(t, false, nil, "locks", "ls", "--dsn", dsn, "--preset", dialects.PresetSysSchedLock, "--table", "schedlock")
	if r.err == nil || !errors.Is(r.err, dialects.ErrInvalid) || !strings.Contains(r.err.Error(), "lock_name") {
		t.Errorf("locks ls --preset sys_sched_lock on a schedlock table: %v", r.err)
	}

	shed, shedLocker := memoryStore(t, dialects.PresetShedlock)
	defer acquireT(t, shedLocker, "report", "host-b").Release(context.Background())
	got := memoryLocks(t, "--dsn", shed)
	if len(got) != 1 || got[0].Preset != dialects.PresetShedlock || got[0].Source != "shedlock" || got[0].Token != nil {
		t.Errorf("locks ls on a shedlock table = %+v", got)
	}
	l, err := mustBackend(t, shed).LeaseLocker(dialects.Table{Preset: dialects.PresetSchedlock, Name: "shedlock"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Acquire(context.Background(), "x", dialects.Options{}); !errors.Is(err, dialects.ErrInvalid) {
		t.Errorf("acquire on a shedlock table read as schedlock (no token column): %v, want a shape error", err)
	}
}

func mustBackend(t *testing.T, dsn string) *memory.Backend {
	t.Helper()
	b, err := memory.Open(strings.TrimPrefix(dsn, "memory://"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestMemoryUnlock: unlock refuses a live lease without --owner or
// --force, releases a memory lease under the owner guard (the holder's
// lease then ends), refuses another owner and a lock that
// changed hands before the change, and --force ends a lease whoever holds
// it.
func TestMemoryUnlock(t *testing.T) {
	dsn, tl := memoryStore(t, dialects.PresetSchedlock)
	held := acquireT(t, tl, "job", "host-a")

	r := runCmd(t, false, nil, "unlock", "job", "--dsn", dsn, "--owner", "host-b", "--yes")
	if ExitCode(r.err) != CodeNegative || !strings.Contains(r.err.Error(), `held by "host-a", not by "host-b"`) {
		t.Fatalf("unlock --owner host-b: %v", r.err)
	}
	select {
	case <-held.Done():
		t.Fatal("a refused unlock ended the lease")
	default:
	}

	// A live lease without --owner or --force: refused, the lease goes on.
	r = runCmd(t, false, nil, "unlock", "job", "--dsn", dsn, "--yes")
	if ExitCode(r.err) != CodeNegative || !strings.Contains(r.err.Error(), `is held by "host-a" until `) || !strings.Contains(r.err.Error(), "--force") {
		t.Fatalf("unlock of a live lease without --owner: %v", r.err)
	}
	select {
	case <-held.Done():
		t.Fatal("a refused unlock ended the lease")
	default:
	}
	if err := held.Refresh(context.Background()); err != nil {
		t.Fatalf("the holder lost its lease to a refused unlock: %v", err)
	}

	r = runCmd(t, false, nil, "unlock", "job", "--dsn", dsn, "--yes", "--owner", "host-a")
	if r.err != nil {
		t.Fatalf("unlock: %v\n%s", r.err, r.stderr)
	}
	select {
	case <-held.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the released lease did not end")
	}
	if got := memoryLocks(t, "--dsn", dsn, "--all"); len(got) != 1 || got[0].State == "held" {
		t.Errorf("after unlock: %+v", got)
	}
	next := acquireT(t, tl, "job", "host-c") // free again
	defer next.Release(context.Background())

	// Changed hands between the read and the change: the guard refuses.
	takeOver := func(ctx context.Context, _ dialects.LockBreaker) {
		if _, err := tl.Expire(ctx, "job"); err != nil {
			t.Error(err)
		}
		acquireT(t, tl, "job", "host-d")
	}
	hr := runUnlockHooked(t, dsn, takeOver, "job", "--yes", "--owner", "host-c")
	if ExitCode(hr.err) != CodeNegative || !strings.Contains(hr.err.Error(), "changed hands") {
		t.Fatalf("unlock of a lock that changed hands: %v", hr.err)
	}
	if got := memoryLocks(t, "--dsn", dsn); len(got) != 1 || got[0].Owner != "host-d" || got[0].State != "held" {
		t.Errorf("the new holder's lock was touched: %+v", got)
	}

	// --force: whoever holds it.
	r = runCmd(t, false, nil, "unlock", "job", "--dsn", dsn, "--force", "--yes")
	if r.err != nil {
		t.Fatalf("unlock --force: %v\n%s", r.err, r.stderr)
	}
	if got := memoryLocks(t, "--dsn", dsn); len(got) != 1 || got[0].Owner != "host-d" || got[0].State != "expired" {
		t.Errorf("after unlock --force: %+v; want host-d's lease ended (expired)", got)
	}

	r = runCmd(t, false, nil, "unlock", "job", "--dsn", dsn, "--kill-session", "--yes")
	if r.err == nil {
		t.Error("unlock --kill-session on a memory store succeeded")
	}
}
