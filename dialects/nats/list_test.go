package nats_test

import (
	"context"
	"testing"
	"time"

	"github.com/schedlock/schedlock/checks"
	"github.com/schedlock/schedlock/dialects"
)

// The listing reads both layouts: a schedlock lock with its owner and
// token, a ShedLock node's lock with no owner, a lock whose holder
// declared a heartbeat it has stopped keeping as stale (judged on the
// server's clock from the stream info), and nothing of a released lock.
// FindLock finds one name exactly; guarded unlock through Handle needs
// the owner, Expire frees it.
func TestListLocks(t *testing.T) {
	dsn := embedded(t)
	b := open(t, dsn)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	l, err := b.LeaseLocker(dialects.Table{})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.(dialects.TableCreator).CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	shed, node, _ := shedlockPair(t, dsn)
	_ = shed
	held, err := l.Acquire(ctx, "nightly.report", dialects.Options{AtMost: time.Minute, Owner: "web-1:42:abc"})
	if err != nil {
		t.Fatal(err)
	}
	stale := dialects.WithHeartbeat("web-2:43:def", dialects.Heartbeat{Every: 50 * time.Millisecond, Lease: time.Minute})
	if _, err := l.Acquire(ctx, "hung", dialects.Options{AtMost: time.Minute, Owner: stale}); err != nil {
		t.Fatal(err)
	}
	gone, err := l.Acquire(ctx, "gone", dialects.Options{AtMost: time.Minute, Owner: "web-1:42:abc"})
	if err != nil {
		t.Fatal(err)
	}
	if err := gone.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := node.Lock(ctx, "shed.job", time.Minute, 0); err != nil || !ok {
		t.Fatal(ok, err)
	}
	time.Sleep(300 * time.Millisecond) // six heartbeats missed
	shedTable := dialects.Table{Preset: dialects.PresetShedlock, Name: shed.Schema().Table}
	listing, err := b.ListLocks(ctx, dialects.ListOptions{All: true, Tables: []dialects.Table{{}, shedTable}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]dialects.LockEntry{}
	for _, e := range listing.Locks {
		got[e.Name] = e
	}
	if len(got) != 3 {
		t.Fatalf("listed %+v, want nightly.report, hung and shed.job", listing.Locks)
	}
	if e := got["nightly.report"]; e.State != dialects.StateHeld || e.Owner != "web-1:42:abc" || !e.HasToken || e.Key != "nightly=2Ereport" || e.Source != "schedlock" {
		t.Errorf("nightly.report: %+v", e)
	} else if tok, _ := held.Token(); e.Token != tok {
		t.Errorf("token %d, the lease's %d", e.Token, tok)
	}
	if e := got["hung"]; e.State != dialects.StateStale || e.StaleReason == "" {
		t.Errorf("hung: state %s (%q), want stale", e.State, e.StaleReason)
	}
	if e := got["shed.job"]; e.State != dialects.StateHeld || e.Owner != "" || e.Preset != dialects.PresetShedlock || e.Key != "shed.job" {
		t.Errorf("shed.job: %+v", e)
	}
	found, err := b.FindLock(ctx, "nightly.report", nil)
	if err != nil || len(found.Locks) != 1 {
		t.Fatalf("FindLock: %+v %v", found, err)
	}
	h, err := l.Handle("nightly.report", "someone-else", 0, dialects.Options{AtMost: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Release(ctx); err == nil {
		t.Fatal("a release under another owner freed the lock")
	}
	if ok, err := l.Expire(ctx, "nightly.report"); err != nil || !ok {
		t.Fatalf("expire: %v %v", ok, err)
	}
	if found, _ := b.FindLock(ctx, "nightly.report", nil); len(found.Locks) != 0 {
		t.Errorf("after the forced unlock: %+v", found.Locks)
	}
	if _, err := b.ListLocks(ctx, dialects.ListOptions{Tables: []dialects.Table{{Name: checks.NewPrefix()}}}); err != nil {
		t.Errorf("a listing of a missing bucket: %v, want it skipped", err)
	}
}
