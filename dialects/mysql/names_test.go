package mysql

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/go-sql-driver/mysql"

	"github.com/schedlock/schedlock/dialects"
)

// longNames are names GET_LOCK refuses unmapped on MySQL (over 64
// characters) or MariaDB (over 192 bytes).
var longNames = map[string]string{
	"65 chars":       strings.Repeat("a", 65),
	"1000 chars":     strings.Repeat("nightly-report/", 66) + "abcdefghij",
	"64 emoji":       strings.Repeat("😀", 64),
	"65 three-byte":  strings.Repeat("中", 65),
	"mixed 200 byte": strings.Repeat("é", 40) + strings.Repeat("x", 120),
}

func checkLockName(t *testing.T, name string) string {
	t.Helper()
	got := LockName(name)
	if n := utf8.RuneCountInString(got); n > MaxLockNameRunes {
		t.Errorf("LockName(%q) has %d characters, more than %d", name, n, MaxLockNameRunes)
	}
	if len(got) > MaxLockNameBytes {
		t.Errorf("LockName(%q) has %d bytes, more than %d", name, len(got), MaxLockNameBytes)
	}
	if !utf8.ValidString(got) {
		t.Errorf("LockName(%q) = %q is not valid UTF-8", name, got)
	}
	if again := LockName(name); again != got {
		t.Errorf("LockName is not deterministic: %q then %q", got, again)
	}
	return got
}

func TestLockName(t *testing.T) {
	for _, short := range []string{"a", "nightly-report", strings.Repeat("b", 64), strings.Repeat("é", 64), strings.Repeat("中", 64)} {
		if got := checkLockName(t, short); got != short {
			t.Errorf("LockName(%q) = %q, want it unchanged", short, got)
		}
	}
	seen := map[string]string{}
	for label, long := range longNames {
		got := checkLockName(t, long)
		if got == long {
			t.Errorf("%s: LockName left a too-long name unchanged", label)
		}
		if other, dup := seen[got]; dup {
			t.Errorf("%s and %s map to the same lock %q", label, other, got)
		}
		seen[got] = label
	}
	// Two long names that share their readable prefix stay apart.
	a, b := LockName(strings.Repeat("x", 100)+"1"), LockName(strings.Repeat("x", 100)+"2")
	if a == b {
		t.Errorf("names differing after the prefix collide: %q", a)
	}
}

func FuzzLockName(f *testing.F) {
	for _, n := range longNames {
		f.Add(n)
	}
	f.Add("short")
	f.Fuzz(func(t *testing.T, name string) {
		if !utf8.ValidString(name) || name == "" {
			return // not a lock name: dialects.CheckName refuses it first
		}
		got := checkLockName(t, name)
		if utf8.RuneCountInString(name) <= MaxLockNameRunes && len(name) <= MaxLockNameBytes && got != name {
			t.Errorf("LockName(%q) = %q, want it unchanged", name, got)
		}
	})
}

// TestLockNameLive proves the server takes every mapped name, and that the
// byte limit is real: MariaDB refuses 64 emoji (256 bytes) unmapped.
func TestLockNameLive(t *testing.T) {
	d := openDetected(t)
	c := conn(t, d.SQL)
	ctx := testContext(t)
	ops := &SessionOps{Info: d.Info}
	for label, long := range longNames {
		long = uniqueName("") + long // never collide with a parallel run
		got, err := ops.TryLock(ctx, c, long)
		if err != nil || !got {
			t.Fatalf("%s: GET_LOCK of the mapped name = %v, %v", label, got, err)
		}
		holds, err := ops.Holds(ctx, c, long)
		if err != nil || !holds {
			t.Errorf("%s: Holds = %v, %v", label, holds, err)
		}
		released, err := ops.Unlock(ctx, c, long)
		if err != nil || !released {
			t.Errorf("%s: RELEASE_LOCK of the mapped name = %v, %v", label, released, err)
		}
	}
	if d.Info.Product == dialects.ProductMariaDB {
		var got *int64
		err := c.QueryRowContext(ctx, "SELECT GET_LOCK(?, 0)", strings.Repeat("😀", 64)).Scan(&got)
		var me *mysql.MySQLError
		if !errors.As(err, &me) || me.Number != 1059 {
			t.Errorf("unmapped 64-emoji name: got %v, %v; want error 1059 (identifier too long)", got, err)
		}
	}
}
