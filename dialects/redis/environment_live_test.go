package redis_test

import (
	"context"
	"errors"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/redis/shedlocksim"
	"github.com/schedlock/schedlock/lock"
)

// shedlockValueRE is ShedLock's value as InternalRedisLockProvider writes
// it, the owner after the '@'.
var shedlockValueRE = regexp.MustCompile(`^ADDED:\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z@(.+)$`)

// x-namespace=ENV with x-preset=shedlock takes the key job-lock:ENV:NAME —
// the key of a ShedLock node built with .environment("ENV") — and never
// job-lock:default:ENV::NAME: the node is refused while schedlock holds
// the lock, also through an at-least after release, and schedlock is
// refused while the node holds it, also through the node's own at-least
// (SET … XX PX). The listing of that environment shows both holders'
// locks in namespace ENV.
func TestShedlockNamespaceIsTheEnvironment(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := liveClient(t)
	env := raceEnv("env-")
	node := shedlocksim.Node{Client: c, Environment: env}
	other := shedlocksim.Node{Client: c} // .environment not called: "default"
	t.Cleanup(func() {
		for _, k := range append(scanAll(t, c, "job-lock:"+env+":*"), scanAll(t, c, "job-lock:default:"+env+"*")...) {
			c.Del(context.Background(), k)
		}
	})
	db, err := lock.Open(ctx, withQuery(liveDSN(t), "x-preset=shedlock&x-namespace="+url.QueryEscape(env)))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	lease, err := db.Acquire(ctx, "nightly", lock.Options{AtMost: time.Minute, AtLeast: 30 * time.Second, Owner: "node-a:1"})
	if err != nil {
		t.Fatal(err)
	}
	if lease.Name() != "nightly" {
		t.Errorf("lease name %q, want nightly", lease.Name())
	}
	v, err := c.Get(ctx, node.Key("nightly")).Result()
	if m := shedlockValueRE.FindStringSubmatch(v); err != nil || m == nil || m[1] != "node-a:1" {
		t.Fatalf("key %s: %q %v, want ShedLock's value with owner node-a:1", node.Key("nightly"), v, err)
	}
	if keys := scanAll(t, c, "job-lock:default:"+env+"*"); len(keys) != 0 {
		t.Errorf("keys of the namespace in the default environment: %q", keys)
	}
	if _, ok, err := node.Lock(ctx, "nightly", time.Minute); err != nil || ok {
		t.Fatalf("ShedLock node of %s took a lock schedlock holds: %v %v", env, ok, err)
	}
	// Another environment's lock of the same name is another lock.
	held, ok, err := other.Lock(ctx, "nightly", time.Minute)
	if err != nil || !ok {
		t.Fatalf("the default environment's nightly: %v %v, want it free", ok, err)
	}
	_ = other.Unlock(ctx, held, 0)

	if err := lease.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if ttl, err := c.PTTL(ctx, node.Key("nightly")).Result(); err != nil || ttl <= 0 || ttl > 30*time.Second {
		t.Fatalf("after a release within at-least: PTTL %v %v, want the key kept up to 30s", ttl, err)
	}
	if _, ok, err := node.Lock(ctx, "nightly", time.Minute); err != nil || ok {
		t.Fatalf("ShedLock node took a lock within its at-least: %v %v", ok, err)
	}
	if err := c.Del(ctx, node.Key("nightly")).Err(); err != nil { // as an operator would
		t.Fatal(err)
	}

	// The node holds: schedlock is refused, also after the node's release
	// within its at-least, and gets it once the key is gone.
	held, ok, err = node.Lock(ctx, "nightly", time.Minute)
	if err != nil || !ok {
		t.Fatalf("ShedLock node: %v %v", ok, err)
	}
	if _, err := db.Acquire(ctx, "nightly", lock.Options{AtMost: time.Minute}); !errors.Is(err, lock.ErrHeld) {
		t.Fatalf("acquire while ShedLock holds: %v, want ErrHeld", err)
	}
	b := openLive(t)
	listing, err := b.ListLocks(ctx, dialects.ListOptions{Tables: []dialects.Table{{Preset: dialects.PresetShedlock, Name: env}}})
	if err != nil || len(listing.Locks) != 1 {
		t.Fatalf("listing of %s: %+v %v", env, listing, err)
	}
	if e := listing.Locks[0]; e.Name != "nightly" || e.Namespace != env || e.Source != env || e.Key != node.Key("nightly") || e.State != dialects.StateHeld || !strings.Contains(e.Owner, ":") {
		t.Errorf("listed %+v, want nightly of namespace %s held by the node", e, env)
	}
	if err := node.Unlock(ctx, held, 20*time.Second); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Acquire(ctx, "nightly", lock.Options{AtMost: time.Minute}); !errors.Is(err, lock.ErrHeld) {
		t.Fatalf("acquire within the node's at-least: %v, want ErrHeld", err)
	}
	if err := c.Del(ctx, node.Key("nightly")).Err(); err != nil {
		t.Fatal(err)
	}
	lease, err = db.Acquire(ctx, "nightly", lock.Options{AtMost: time.Minute})
	if err != nil {
		t.Fatalf("acquire once the node's key is gone: %v", err)
	}
	if err := lease.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := c.Exists(ctx, node.Key("nightly")).Result(); err != nil || n != 0 {
		t.Errorf("after release: %d keys (%v), want none", n, err)
	}
}

// An environment given twice, as x-table and x-namespace, is refused by
// lock.Open before it connects: ErrInvalid, one line.
func TestShedlockEnvironmentGivenTwice(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// A port nothing listens on: a refusal after dialling would say so.
	_, err := lock.Open(ctx, "redis://127.0.0.1:1/0?x-preset=shedlock&x-table=staging&x-namespace=prod")
	if !errors.Is(err, lock.ErrInvalid) || !strings.Contains(err.Error(), `table "staging" and namespace "prod" both name ShedLock's environment`) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("Open: %v, want one line matching ErrInvalid", err)
	}
}
