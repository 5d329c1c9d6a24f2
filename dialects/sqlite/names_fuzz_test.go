package sqlite_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/sqlite"
)

// FuzzNameRoundTrip proves any valid name is data: it is held, found by
// Inspect under its stored form, kept apart from a name that differs in its
// last byte, and released; a name CheckName refuses is refused as invalid.
func FuzzNameRoundTrip(f *testing.F) {
	for _, seed := range []string{
		"nightly", "it's", `"quoted"`, "'; DROP TABLE schedlock; --", "a\x00b", "ключ 名前 ✓ 🔒",
		"  spaced  ", "%_*?", strings.Repeat("x", 1100), strings.Repeat("名", 1025),
	} {
		f.Add(seed)
	}
	ctx := context.Background()
	db := openDB(f, filepath.Join(f.TempDir(), "fuzz.db"))
	l, err := sqlite.NewTableLocker(db, dialects.Table{})
	if err != nil {
		f.Fatal(err)
	}
	defer l.Close()
	if err := l.CreateTable(ctx); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if dialects.CheckName(name) != nil {
			// Empty, not UTF-8, a NUL byte, only white space: refused
			// before anything is sent.
			if _, err := l.Acquire(ctx, name, dialects.Options{Owner: "fuzz"}); !errors.Is(err, dialects.ErrInvalid) {
				t.Fatalf("acquire %q: %v; want ErrInvalid", name, err)
			}
			return
		}
		lease, err := l.Acquire(ctx, name, dialects.Options{Owner: "fuzz"})
		if err != nil {
			t.Fatalf("acquire %q: %v", name, err)
		}
		row, found, err := l.Inspect(ctx, name)
		if err != nil || !found || row.Name != l.StoredName(name) || row.Owner != "fuzz" {
			t.Fatalf("inspect %q = %+v, %v, %v", name, row, found, err)
		}
		other := name + "\u00a0"
		if l.StoredName(other) != l.StoredName(name) {
			ol, err := l.Acquire(ctx, other, dialects.Options{Owner: "fuzz-2"})
			if err != nil {
				t.Fatalf("%q and %q are one lock: %v", name, other, err)
			}
			_ = ol.Release(ctx)
		}
		if err := lease.Release(ctx); err != nil {
			t.Fatalf("release %q: %v", name, err)
		}
	})
}
