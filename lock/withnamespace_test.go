package lock

import (
	"errors"
	"path/filepath"
	"testing"
	"time"
)

// WithNamespace around a Locker: the lock of a name in a namespace is
// another lock than the bare name's, stored as ns::name; the same
// namespace twice is one lock; leases report the caller's name; an empty
// namespace returns the locker itself, and a bad one fails every Acquire
// with ErrInvalid.
func TestWithNamespace(t *testing.T) {
	ctx := t.Context()
	db := openT(t, "sqlite:"+filepath.Join(t.TempDir(), "locks.db")+"?x-create-file=true&x-strategy=table")
	if err := db.CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	bare, err := db.Acquire(ctx, "nightly", Options{AtMost: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer bare.Release(ctx)
	lease, err := WithNamespace(db, "prod").Acquire(ctx, "nightly", Options{AtMost: time.Hour})
	if err != nil {
		t.Fatalf("nightly in namespace prod while the bare nightly is held: %v; want a lock of its own", err)
	}
	defer lease.Release(ctx)
	if lease.Name() != "nightly" {
		t.Errorf("lease name %q, want nightly", lease.Name())
	}
	if _, err := WithNamespace(db, "prod").Acquire(ctx, "nightly", Options{}); !errors.Is(err, ErrHeld) {
		t.Errorf("a second wrapper of namespace prod: %v; want ErrHeld", err)
	}
	if _, err := db.Acquire(ctx, "prod::nightly", Options{}); !errors.Is(err, ErrHeld) {
		t.Errorf("the stored name prod::nightly: %v; want ErrHeld", err)
	}
	if l := WithNamespace(db, ""); l != Locker(db) {
		t.Errorf("WithNamespace(db, \"\") = %T, want db itself", l)
	}
	if _, err := WithNamespace(db, "a:b").Acquire(ctx, "nightly", Options{}); !errors.Is(err, ErrInvalid) {
		t.Errorf("namespace a:b: %v; want ErrInvalid", err)
	}
}
