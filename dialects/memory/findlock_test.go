package memory_test

import (
	"context"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/memory"
)

// FindLock (what `unlock` reads) finds the lock of that exact name: a
// name holding glob characters is no pattern, so unlock 'report-*' finds
// the lock called report-* and not report-eu.
func TestFindLockTakesNameLiterally(t *testing.T) {
	b, err := memory.Open(t.Name())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	l, err := b.Locker(dialects.StrategyTable, dialects.Table{})
	if err != nil {
		t.Fatal(err)
	}
	if tc, ok := l.(dialects.TableCreator); ok {
		if err := tc.CreateTable(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"report-eu", "report-*", `a\b`} {
		if _, err := l.Acquire(context.Background(), name, dialects.Options{AtMost: time.Minute}); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"report-*", "report-?", `a\b`, "report-eu"} {
		got, err := b.FindLock(context.Background(), name, nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range got.Locks {
			names = append(names, e.Name)
		}
		want := 1
		if name == "report-?" {
			want = 0
		}
		if len(names) != want || (want == 1 && names[0] != name) {
			t.Errorf("FindLock(%q) = %q, want only the lock of that name", name, names)
		}
	}
}
