package postgres

import (
	"errors"
	"strconv"
	"testing"

	"github.com/schedlock/schedlock/dialects"
)

// openNamed opens the live server as a Target with raw session names of
// key derivation key, as the command line does.
func openNamed(t *testing.T, key string) *Backend {
	t.Helper()
	b, err := Open(testCtx(t), dialects.Target{
		Conn:    liveDSN(t),
		Options: map[string]string{dialects.OptionSessionNames: dialects.SessionNamesRaw, dialects.OptionSessionKey: key},
	})
	if err != nil {
		t.Fatalf("open with raw session names (%s): %v", key, err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b.(*Backend)
}

// With raw session names the lock called NAME is the advisory lock other
// programs take on the key the derivation gives, both ways: their lock
// makes Acquire refuse, and while the locker holds it their
// pg_try_advisory_lock answers false. The lock administration finds
// either holder by the name, on the key pg_locks shows (hashtext: the int4
// sign-extended, objsubid 1).
func TestRawSessionNamesAreOtherProgramsAdvisoryLock(t *testing.T) {
	for _, c := range []struct {
		key, sql string
		name     string
	}{
		{dialects.KeyHashtext, "hashtext($1)", unique("sched:order_close-")},
		{dialects.KeyHashtextExtended, "hashtextextended($1, 0)", unique("sched:order_close-")},
		{dialects.KeySchedlock, "$1", ""},
		{dialects.KeyAsIs, "$1::bigint", ""},
	} {
		t.Run(c.key, func(t *testing.T) {
			ctx := testCtx(t)
			db := openNamed(t, c.key)
			name, arg := c.name, any(c.name)
			switch c.key {
			case dialects.KeySchedlock:
				name = unique("sched:")
				arg = Key(name)
			case dialects.KeyAsIs:
				k := Key(unique("as-is-")) // some bigint no other test takes
				name, arg = strconv.FormatInt(k, 10), k
			}
			locker, err := db.SessionLocker()
			if err != nil {
				t.Fatal(err)
			}
			other := conn(t, liveDB(t))
			otherPID := strconv.FormatInt(backendPID(t, other), 10)
			var got bool
			if err := other.QueryRowContext(ctx, "SELECT pg_try_advisory_lock("+c.sql+")", arg).Scan(&got); err != nil || !got {
				t.Fatalf("another program's pg_try_advisory_lock: %v, %v", got, err)
			}
			if _, err := locker.Acquire(ctx, name, dialects.Options{}); !errors.Is(err, dialects.ErrHeld) {
				t.Fatalf("Acquire while another program holds the key: %v, want ErrHeld", err)
			}
			admin := db.LockAdmin()
			e, found, err := admin.SessionLock(ctx, name)
			if err != nil || !found || e.Holder.SessionID != otherPID || e.Name != name {
				t.Fatalf("SessionLock(%q) = %+v, %v, %v; want held by %s", name, e, found, err, otherPID)
			}
			var key int64
			if err := other.QueryRowContext(ctx, "SELECT ("+c.sql+")::bigint", arg).Scan(&key); err != nil {
				t.Fatal(err)
			}
			if e.Key != strconv.FormatInt(key, 10) {
				t.Errorf("listed key %s, the server's derivation %d", e.Key, key)
			}
			if err := other.QueryRowContext(ctx, "SELECT pg_advisory_unlock("+c.sql+")", arg).Scan(&got); err != nil || !got {
				t.Fatalf("pg_advisory_unlock: %v, %v", got, err)
			}

			lease, err := locker.Acquire(ctx, name, dialects.Options{})
			if err != nil {
				t.Fatalf("Acquire of a free key: %v", err)
			}
			if err := other.QueryRowContext(ctx, "SELECT pg_try_advisory_lock("+c.sql+")", arg).Scan(&got); err != nil || got {
				t.Fatalf("pg_try_advisory_lock while schedlock holds the key: %v, %v; want false", got, err)
			}
			e, found, err = admin.SessionLock(ctx, name)
			if err != nil || !found || e.Holder.SessionID == otherPID {
				t.Fatalf("SessionLock while the locker holds it: %+v, %v, %v", e, found, err)
			}
			if err := lease.Release(ctx); err != nil {
				t.Fatal(err)
			}
			if err := other.QueryRowContext(ctx, "SELECT pg_try_advisory_lock("+c.sql+")", arg).Scan(&got); err != nil || !got {
				t.Fatalf("pg_try_advisory_lock after Release: %v, %v; want true", got, err)
			}
		})
	}
}

// Under the key derivation a name that is no bigint is refused before any
// statement, as ErrInvalid.
func TestRawKeyNameIsABigint(t *testing.T) {
	locker, err := openNamed(t, dialects.KeyAsIs).SessionLocker()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := locker.Acquire(testCtx(t), "nightly-report", dialects.Options{}); !errors.Is(err, dialects.ErrInvalid) {
		t.Errorf("Acquire of a name under the key derivation: %v, want ErrInvalid", err)
	}
}
