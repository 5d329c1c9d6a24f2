package dialects

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// fakeEntry is an entry that opens nothing, for registry tests.
func fakeEntry(name string, schemes ...string) *Dialect {
	d := &Dialect{Name: name, Open: func(context.Context, Target) (Backend, error) { return nil, ErrUnsupported }}
	for _, s := range schemes {
		d.Schemes = append(d.Schemes, Scheme{Name: s})
	}
	return d
}

// unregister removes what a test registered, and the conflicts it caused.
func unregister(t *testing.T, names ...string) {
	t.Cleanup(func() {
		registryMu.Lock()
		defer registryMu.Unlock()
		for _, n := range names {
			delete(registry, n)
			delete(registeredBy, n)
		}
		conflicts = slices.DeleteFunc(conflicts, func(c conflict) bool {
			for _, n := range names {
				if c.kept.Name == n || c.dropped.Name == n {
					return true
				}
			}
			return false
		})
	})
}

// TestRegisterConflictIsAnErrorAtUse: two packages claiming one scheme do
// not panic at init; the scheme they share, and every scheme of the
// refused entry, fail in ForScheme with one line naming both packages and
// what to do. The first entry's other schemes still open.
func TestRegisterConflictIsAnErrorAtUse(t *testing.T) {
	unregister(t, "zz-conflict-a", "zz-conflict-b")
	Register(fakeEntry("zz-conflict-a", "zz-shared", "zz-a-only"))
	Register(fakeEntry("zz-conflict-b", "zz-b-only", "zz-shared")) // no panic

	for _, scheme := range []string{"zz-shared", "zz-b-only"} {
		_, _, err := ForScheme(scheme)
		if err == nil {
			t.Fatalf("ForScheme(%q) succeeded", scheme)
		}
		msg := err.Error()
		for _, want := range []string{`"zz-shared://"`, "zz-conflict-a (github.com/schedlock/schedlock/dialects)", "zz-conflict-b (github.com/schedlock/schedlock/dialects)", "import only one of them"} {
			if !strings.Contains(msg, want) {
				t.Errorf("ForScheme(%q) error %q lacks %q", scheme, msg, want)
			}
		}
		if strings.Contains(msg, "\n") {
			t.Errorf("ForScheme(%q) error is not one line: %q", scheme, msg)
		}
	}
	if d, _, err := ForScheme("zz-a-only"); err != nil || d.Name != "zz-conflict-a" {
		t.Errorf("ForScheme(zz-a-only) = %v, %v; want the first entry", d, err)
	}
	if _, ok := Lookup("zz-conflict-b"); ok {
		t.Error("the refused entry was registered")
	}
}

// TestRegisterNameTwiceIsAnErrorAtUse: a name registered twice (two
// packages, one backend name) refuses every scheme of the name.
func TestRegisterNameTwiceIsAnErrorAtUse(t *testing.T) {
	unregister(t, "zz-twice")
	Register(fakeEntry("zz-twice", "zz-twice-1"))
	Register(fakeEntry("zz-twice", "zz-twice-2")) // no panic

	for _, scheme := range []string{"zz-twice-1", "zz-twice-2"} {
		_, _, err := ForScheme(scheme)
		if err == nil || !strings.Contains(err.Error(), `register the backend "zz-twice"`) || !strings.Contains(err.Error(), "import only one of them") {
			t.Errorf("ForScheme(%q) error = %v", scheme, err)
		}
	}
}
