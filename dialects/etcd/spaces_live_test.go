package etcd_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/checks"
	"github.com/schedlock/schedlock/dialects"
)

// TestTableAndNameStayApart: a lock held in the table T does not hold up
// the lock called T of the DSN prefix's own space, nor the other way round.
func TestTableAndNameStayApart(t *testing.T) {
	ctx := context.Background()
	b := openLive(t)
	table := checks.NewPrefix()
	inTable, err := b.LeaseLocker(dialects.Table{Name: table})
	if err != nil {
		t.Fatal(err)
	}
	plain, err := b.LeaseLocker(dialects.Table{})
	if err != nil {
		t.Fatal(err)
	}
	opts := dialects.Options{Owner: "spaces-test", AtMost: 10 * time.Second}
	held, err := inTable.Acquire(ctx, "p", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release(ctx)
	other, err := plain.Acquire(ctx, table, opts)
	if err != nil {
		t.Fatalf("lock %q of the default table while table %q holds \"p\": %v", table, table, err)
	}
	defer other.Release(ctx)
	if _, err := inTable.Acquire(ctx, "p", opts); !errors.Is(err, dialects.ErrHeld) {
		t.Fatalf("second acquire of \"p\" in table %q: %v, want ErrHeld", table, err)
	}
}

// TestNestedPrefixIsNotAHolder: a lock named like a DSN prefix nested in
// its own is refused as invalid, naming the keys in the way, instead of
// being reported held by whoever holds a lock of the nested prefix; a
// force release of it leaves the nested prefix's lock alone.
func TestNestedPrefixIsNotAHolder(t *testing.T) {
	ctx := context.Background()
	dsn := strings.TrimSuffix(liveDSN(t), "/")
	inner := checks.NewPrefix()
	outer := openLive(t)
	nested := openDSN(t, dsn+"/"+inner)
	innerLocker, err := nested.LeaseLocker(dialects.Table{})
	if err != nil {
		t.Fatal(err)
	}
	opts := dialects.Options{Owner: "nested-holder", AtMost: 10 * time.Second}
	held, err := innerLocker.Acquire(ctx, "job", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release(ctx)
	outerLocker, err := outer.LeaseLocker(dialects.Table{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = outerLocker.Acquire(ctx, inner, dialects.Options{Owner: "outer", AtMost: 10 * time.Second})
	if !errors.Is(err, dialects.ErrInvalid) || errors.Is(err, dialects.ErrHeld) || !strings.Contains(err.Error(), "another lock space") {
		t.Fatalf("acquire of %q beside the nested prefix's lock: %v, want ErrInvalid naming the other lock space", inner, err)
	}
	if _, err := outerLocker.Expire(ctx, inner); !errors.Is(err, dialects.ErrInvalid) {
		t.Fatalf("force release of %q beside the nested prefix's lock: %v, want ErrInvalid", inner, err)
	}
	if err := held.Refresh(ctx); err != nil {
		t.Fatalf("the nested prefix's lock after a force release of %q outside it: %v", inner, err)
	}
}
