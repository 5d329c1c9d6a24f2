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

// checkLockName maps name in database and checks the limits, validity
// and determinism of the result.
func checkLockName(t *testing.T, database, name string) string {
	t.Helper()
	got := LockName(database, name)
	if n := utf8.RuneCountInString(got); n > MaxLockNameRunes {
		t.Errorf("LockName(%q, %q) has %d characters, more than %d", database, name, n, MaxLockNameRunes)
	}
	if len(got) > MaxLockNameBytes {
		t.Errorf("LockName(%q, %q) has %d bytes, more than %d", database, name, len(got), MaxLockNameBytes)
	}
	if !utf8.ValidString(got) {
		t.Errorf("LockName(%q, %q) = %q is not valid UTF-8", database, name, got)
	}
	if again := LockName(database, name); again != got {
		t.Errorf("LockName is not deterministic: %q then %q", got, again)
	}
	if !strings.Contains(got, "/") && !looksShortened(got) {
		t.Errorf("LockName(%q, %q) = %q has neither a / nor a hash: it could be another tool's name", database, name, got)
	}
	return got
}

func TestLockName(t *testing.T) {
	for _, c := range []struct{ database, name, want string }{
		{"jobs", "nightly-report", "jobs/nightly-report"},
		{"", "nightly-report", "/nightly-report"},
		{"jobs", "a/b", "jobs/a/b"},
		{"jobs/a", "b", `jobs\/a/b`},
		{`we\ird`, "x", `we\\ird/x`},
		{"jobs", "atlas_migrate_execute", "jobs/atlas_migrate_execute"},
	} {
		if got := checkLockName(t, c.database, c.name); got != c.want {
			t.Errorf("LockName(%q, %q) = %q, want %q", c.database, c.name, got, c.want)
		}
		if name, exact := NameFromLock(c.database, c.want); name != c.name || !exact {
			t.Errorf("NameFromLock(%q, %q) = %q, %v; want %q, true", c.database, c.want, name, exact, c.name)
		}
	}
	for label, long := range longNames {
		got := checkLockName(t, "jobs", long)
		if got == "jobs/"+long {
			t.Errorf("%s: LockName left a too-long name unchanged", label)
		}
		if name, exact := NameFromLock("jobs", got); exact || !strings.HasPrefix("jobs/"+long, "jobs/"+strings.TrimSuffix(name, name[strings.LastIndexByte(name, '#'):])) {
			t.Errorf("%s: NameFromLock(%q) = %q, %v; want the start of the name, not exact", label, got, name, exact)
		}
	}
	// A database name as long as MySQL allows (64) still leaves a
	// distinct, bounded lock name.
	longDB := strings.Repeat("d", 64)
	if a, b := checkLockName(t, longDB, "x"), checkLockName(t, longDB, "y"); a == b {
		t.Errorf("two names in a 64-character database map to one lock %q", a)
	}
}

// TestLockNamesOfDatabasesDiffer: the same name in two databases, and
// names that an unescaped "/" would confuse, are different locks.
func TestLockNamesOfDatabasesDiffer(t *testing.T) {
	pairs := [][4]string{
		{"jobs", "nightly", "staging", "nightly"},
		{"jobs/a", "b", "jobs", "a/b"},
		{`jobs\`, "b", "jobs", `\b`},
		{"", "jobs/x", "jobs", "x"},
		{"Jobs" + strings.Repeat("x", 60), "n", "Jobs" + strings.Repeat("x", 60) + "y", "n"},
	}
	for _, p := range pairs {
		if a, b := LockName(p[0], p[1]), LockName(p[2], p[3]); a == b {
			t.Errorf("(%q, %q) and (%q, %q) are one GET_LOCK name %q", p[0], p[1], p[2], p[3], a)
		}
	}
}

// TestLockNamesNeverAPeersName: schedlock's GET_LOCK names never equal
// the names golang-migrate, Flyway and Atlas take (their values from
// docs/locks.md, Migration tools' locks: golang-migrate's decimal id,
// Flyway-<hashCode>, atlas_migrate_execute / atlas_migrate_diff), whatever
// the lock is called and in whichever database.
func TestLockNamesNeverAPeersName(t *testing.T) {
	peers := []string{"2851680549", "Flyway-1519089272", "Flyway--42", "atlas_migrate_execute", "atlas_migrate_diff"}
	for _, database := range []string{"", "admintest", "jobs", strings.Repeat("d", 64)} {
		for _, peer := range peers {
			for _, name := range []string{peer, "", "x"} {
				if name == "" {
					continue
				}
				if got := LockName(database, name); got == peer || strings.EqualFold(got, peer) {
					t.Errorf("LockName(%q, %q) = %q is %s's lock", database, name, got, peer)
				}
			}
			if name, _ := NameFromLock(database, peer); name != "" {
				t.Errorf("NameFromLock(%q, %q) = %q: another tool's lock read as schedlock's", database, peer, name)
			}
		}
	}
}

func TestLockNameSharedPrefixes(t *testing.T) {
	a, b := LockName("jobs", strings.Repeat("x", 100)+"1"), LockName("jobs", strings.Repeat("x", 100)+"2")
	if a == b {
		t.Errorf("two long names with a shared prefix map to one lock %q", a)
	}
}

func FuzzLockName(f *testing.F) {
	f.Add("jobs", "nightly")
	f.Add("", strings.Repeat("é", 100))
	f.Add("a/b", `c\d`)
	f.Fuzz(func(t *testing.T, database, name string) {
		if !utf8.ValidString(database) || !utf8.ValidString(name) || name == "" {
			return
		}
		got := checkLockName(t, database, name)
		scoped := lockScope(database) + name
		if utf8.RuneCountInString(scoped) <= MaxLockNameRunes && len(scoped) <= MaxLockNameBytes {
			if got != scoped {
				t.Errorf("LockName(%q, %q) = %q, want %q", database, name, got, scoped)
			}
			if back, exact := NameFromLock(database, got); back != name || (exact == looksShortened(got)) {
				t.Errorf("NameFromLock(%q, %q) = %q, %v; want %q", database, got, back, exact, name)
			}
		}
	})
}

// TestLockNameLive proves the server takes every mapped name, and that the
// byte limit is real: MariaDB refuses 64 emoji (256 bytes) unmapped.
func TestLockNameLive(t *testing.T) {
	d := openDetected(t)
	c := conn(t, d.SQL)
	ctx := testContext(t)
	ops := &SessionOps{Info: d.Info, Database: d.Database}
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
