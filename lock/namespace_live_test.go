package lock

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// TestNamespacesKeepLocksApart: on one database (one SQLite file, one
// PostgreSQL or MariaDB server) two handles opened with different
// x-namespace both hold the lock of the same name at once, on every
// strategy; a third handle in the first namespace is refused, a handle
// without a namespace holds the bare name too, and leases report the name
// as the caller gave it.
func TestNamespacesKeepLocksApart(t *testing.T) {
	for backend, raw := range liveDSNs(t) {
		for _, strategy := range []Strategy{StrategySession, StrategyTable} {
			if backend == "sqlite" && strategy == StrategySession {
				continue
			}
			t.Run(backend+"/"+string(strategy), func(t *testing.T) {
				ctx := t.Context()
				base := withOption(raw, "x-strategy="+string(strategy))
				if strategy == StrategyTable {
					base = withOption(base, "x-table=ns_test_"+strings.ReplaceAll(NewOwner()[len(NewOwner())-8:], "-", "_"))
				}
				plain := openT(t, base)
				if err := plain.CreateTable(ctx); err != nil {
					t.Fatal(err)
				}
				if tl, ok := plain.locker.(dialects.LeaseLocker); ok {
					t.Cleanup(func() {
						if d, ok := tl.(dialects.TableDropper); ok {
							_ = d.DropTable(context.Background())
						}
					})
				}
				prod := openT(t, withOption(base, "x-namespace=prod"))
				staging := openT(t, withOption(base, "x-namespace=staging"))
				prodAgain := openT(t, withOption(base, "x-namespace=prod"))

				name := "ns-" + NewOwner()
				var leases []Lease
				for label, db := range map[string]*DB{"prod": prod, "staging": staging, "none": plain} {
					lease, err := db.Acquire(ctx, name, Options{AtMost: time.Hour})
					if err != nil {
						t.Fatalf("namespace %s: %v; want each namespace to hold its own lock", label, err)
					}
					if lease.Name() != name {
						t.Errorf("namespace %s: lease name %q, want %q", label, lease.Name(), name)
					}
					leases = append(leases, lease)
				}
				if _, err := prodAgain.Acquire(ctx, name, Options{}); !errors.Is(err, ErrHeld) {
					t.Fatalf("second prod handle: %v; want ErrHeld (one namespace is one lock)", err)
				}
				if _, err := plain.Acquire(ctx, dialects.NamespacedName("prod", name), Options{}); !errors.Is(err, ErrHeld) {
					t.Fatalf("the stored name prod::%s without a namespace: %v; want ErrHeld", name, err)
				}
				for _, l := range leases {
					if err := l.Release(ctx); err != nil {
						t.Fatal(err)
					}
				}
				taken, err := prodAgain.Acquire(ctx, name, Options{})
				if err != nil {
					t.Fatalf("prod after release: %v", err)
				}
				_ = taken.Release(ctx)
			})
		}
	}
}

// TestOpenRefusesBadNamespace: a namespace that breaks the name rules is
// refused by Open with ErrInvalid, before connecting.
func TestOpenRefusesBadNamespace(t *testing.T) {
	dsn := liveDSNs(t)["sqlite"]
	for _, ns := range []string{"a:b", "%20%20", "a%00b", "x*", "", strings.Repeat("n", 33)} {
		_, err := Open(t.Context(), withOption(dsn, "x-namespace="+ns))
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "x-namespace") {
			t.Errorf("x-namespace=%q: %v; want ErrInvalid naming x-namespace", ns, err)
		}
	}
}
