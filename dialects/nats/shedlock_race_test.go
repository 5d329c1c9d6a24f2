package nats_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/schedlock/schedlock/checks"
	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/dialecttest"
	"github.com/schedlock/schedlock/dialects/nats/shedlocksim"
	"github.com/schedlock/schedlock/lock"
)

// jsOf is a plain nats.go client of dsn's server: the connection a
// ShedLock node would have.
func jsOf(t *testing.T, dsn string) jetstream.JetStream {
	t.Helper()
	u := dsn[:strings.LastIndex(dsn, "/")]
	nc, err := natsgo.Connect(u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// shedlockPair is the shedlock preset's locker on a bucket of the test's
// own and a ShedLock node on the same bucket, which ShedLock's
// constructor created; the bucket is deleted at the end.
func shedlockPair(t *testing.T, dsn string) (dialects.LeaseLocker, shedlocksim.Node, jetstream.KeyValue) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	bucket := checks.NewPrefix() + "_shed"
	js := jsOf(t, dsn)
	kv, err := shedlocksim.Bucket(ctx, js, bucket)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = js.DeleteKeyValue(context.Background(), bucket) })
	l, err := open(t, dsn).LeaseLocker(dialects.Table{Preset: dialects.PresetShedlock, Name: bucket})
	if err != nil {
		t.Fatal(err)
	}
	return l, shedlocksim.Node{KV: kv}, kv
}

func TestShedlockPresetExcludesShedLock(t *testing.T) {
	l, node, kv := shedlockPair(t, embedded(t))
	raceShedLock(t, l, node, kv)
}

func TestShedlockPresetExcludesShedLockLive(t *testing.T) {
	l, node, kv := shedlockPair(t, liveDSN(t))
	raceShedLock(t, l, node, kv)
}

// raceShedLock races l against node (dialecttest.RaceShedLock); every
// key is deleted at the end (no lock left).
func raceShedLock(t *testing.T, l dialects.Locker, node shedlocksim.Node, kv jetstream.KeyValue) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dialecttest.RaceShedLock(ctx, t, l, "job.%d", func(ctx context.Context, name string, atMost time.Duration) (func(context.Context) error, bool, error) {
		held, ok, err := node.Lock(ctx, name, atMost, 0)
		return func(ctx context.Context) error { return node.Unlock(ctx, held) }, ok, err
	})
	keys, err := kv.ListKeys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for k := range keys.Keys() {
		left = append(left, k)
	}
	if len(left) != 0 {
		t.Errorf("keys left behind: %q", left)
	}
}

// The layouts agree on every step: ShedLock reads schedlock's value as a
// lease end ahead of it and is refused; schedlock reads ShedLock's and is
// refused with no holder named; a lease end ShedLock wrote that has passed
// is taken over by schedlock under the revision read; ShedLock's late
// unlock then leaves schedlock's key alone (its value is later than
// ShedLock's lockAtMostUntil); ShedLock's at-least keeps the key; and a
// release of a lease whose key ShedLock replaced deletes nothing.
func TestShedlockLayoutInterop(t *testing.T) {
	l, node, kv := shedlockPair(t, embedded(t))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	lease, err := l.Acquire(ctx, "report", dialects.Options{AtMost: time.Minute, Owner: "schedlock-node"})
	if err != nil {
		t.Fatal(err)
	}
	e, err := kv.Get(ctx, "report")
	if err != nil {
		t.Fatal(err)
	}
	if len(e.Value()) != 8 {
		t.Fatalf("schedlock's value is %d bytes, want ShedLock's 8", len(e.Value()))
	}
	if end := shedlocksim.Until(e.Value()); end.Before(time.Now().Add(50*time.Second)) || end.After(time.Now().Add(61*time.Second)) {
		t.Errorf("the value says the lease ends at %s, want about a minute from now", end)
	}
	if _, ok, err := node.Lock(ctx, "report", time.Minute, 0); err != nil || ok {
		t.Fatalf("ShedLock took a lock schedlock holds: ok %v, %v", ok, err)
	}
	row, found, err := l.Inspect(ctx, "report")
	if err != nil || !found || row.Owner != "schedlock-node" {
		t.Fatalf("inspect: %+v %v %v, want schedlock's owner from the headers", row, found, err)
	}
	if tok, _ := lease.Token(); row.Token != tok {
		t.Errorf("inspect token %d, lease token %d", row.Token, tok)
	}
	if err := lease.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if row, _, _ := l.Inspect(ctx, "report"); func() bool { tok, _ := lease.Token(); return row.Token != tok }() {
		t.Errorf("the token changed with a refresh: %d", row.Token)
	}
	if err := lease.Release(ctx); err != nil {
		t.Fatal(err)
	}

	// ShedLock holds with a lease that has already ended on its clock.
	past := shedlocksim.Node{KV: kv, Now: func() time.Time { return time.Now().Add(-time.Hour) }}
	old, ok, err := past.Lock(ctx, "report", time.Minute, 0)
	if err != nil || !ok {
		t.Fatalf("ShedLock lock: %v %v", ok, err)
	}
	fresh, ok, err := node.Lock(ctx, "fresh", time.Minute, 0)
	if err != nil || !ok {
		t.Fatalf("ShedLock lock: %v %v", ok, err)
	}
	var held *dialects.HeldError
	if _, err := l.Acquire(ctx, "fresh", dialects.Options{AtMost: time.Minute, Owner: "schedlock-node"}); !errors.As(err, &held) || held.Holder != "" {
		t.Fatalf("acquire of a lock ShedLock holds: %v, want held with no holder named", err)
	}
	taken, err := l.Acquire(ctx, "report", dialects.Options{AtMost: time.Minute, Owner: "schedlock-node"})
	if err != nil {
		t.Fatalf("schedlock did not take over ShedLock's ended lease: %v", err)
	}
	if err := past.Unlock(ctx, old); err != nil {
		t.Fatal(err)
	}
	if _, found, _ := l.Inspect(ctx, "report"); !found {
		t.Fatal("ShedLock's late unlock deleted schedlock's key")
	}
	// ShedLock's unguarded delete, as a node whose clock runs behind would
	// send it, takes the key away: schedlock's release finds out and
	// deletes nothing of the next holder's.
	if err := kv.Delete(ctx, "report"); err != nil {
		t.Fatal(err)
	}
	again, ok, err := node.Lock(ctx, "report", time.Minute, 0)
	if err != nil || !ok {
		t.Fatalf("ShedLock lock after the delete: %v %v", ok, err)
	}
	if err := taken.Release(ctx); !errors.Is(err, dialects.ErrLeaseLost) && !errors.Is(err, dialects.ErrNotOwner) {
		t.Fatalf("release of a replaced key: %v, want the lease lost", err)
	}
	if _, err := kv.Get(ctx, "report"); err != nil {
		t.Fatalf("schedlock's release deleted ShedLock's key: %v", err)
	}
	if err := node.Unlock(ctx, again); err != nil {
		t.Fatal(err)
	}
	// At-least: ShedLock keeps the key until lockAtLeastUntil.
	_ = node.Unlock(ctx, fresh)
	kept, ok, err := node.Lock(ctx, "kept", time.Minute, 30*time.Second)
	if err != nil || !ok {
		t.Fatal(err)
	}
	if err := node.Unlock(ctx, kept); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Acquire(ctx, "kept", dialects.Options{AtMost: time.Minute, Owner: "schedlock-node"}); !errors.Is(err, dialects.ErrHeld) {
		t.Fatalf("acquire within ShedLock's at-least: %v, want held", err)
	}
	// A name that is no NATS key is refused in one line, nothing written.
	if _, err := l.Acquire(ctx, "a b", dialects.Options{AtMost: time.Minute, Owner: "x"}); !errors.Is(err, dialects.ErrInvalid) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("acquire of a name with a space: %v, want one line matching ErrInvalid", err)
	}
}

// TestConformanceShedlock runs the lock contract's suite on the shedlock
// preset.
func TestConformanceShedlock(t *testing.T) {
	b := open(t, embedded(t))
	dialecttestRun(t, b, dialects.Table{Preset: dialects.PresetShedlock, Name: checks.NewPrefix()})
}

// libraryLocker is a *lock.DB as the engine's Locker.
type libraryLocker struct{ *lock.DB }

func (l libraryLocker) Acquire(ctx context.Context, name string, opts dialects.Options) (dialects.Lease, error) {
	return l.DB.Acquire(ctx, name, lock.Options(opts))
}

// The same race through lock.Open with x-preset=shedlock and the bucket
// named by the DSN, as a Go program sharing ShedLock's bucket opens it.
func TestShedlockPresetThroughLockOpen(t *testing.T) {
	dsn := embedded(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	js := jsOf(t, dsn)
	kv, err := shedlocksim.Bucket(ctx, js, "")
	if err != nil {
		t.Fatal(err)
	}
	db, err := lock.Open(ctx, strings.TrimSuffix(dsn, "/schedlock")+"/"+shedlocksim.DefaultBucket+"?x-preset=shedlock")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	raceShedLock(t, libraryLocker{db}, shedlocksim.Node{KV: kv}, kv)
}
