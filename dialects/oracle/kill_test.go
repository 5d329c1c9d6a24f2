package oracle

import (
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/sqlkit"
)

var regexpSessionID = regexp.MustCompile(`^\d+,\d+,@\d+$`)

func TestParseSessionID(t *testing.T) {
	tests := []struct {
		in                string
		sid, serial, inst int64
		ok                bool
	}{
		{"123,4567", 123, 4567, 1, true},
		{"123,4567,@2", 123, 4567, 2, true},
		{" 12 , 34 , @1 ", 12, 34, 1, true},
		{"123", 0, 0, 0, false},
		{"123,4567,2", 0, 0, 0, false},
		{"123,4567,@0", 0, 0, 0, false},
		{"1,2' IMMEDIATE; DROP TABLE x --", 0, 0, 0, false},
		{"-1,2", 0, 0, 0, false},
		{"", 0, 0, 0, false},
	}
	for _, tt := range tests {
		sid, serial, inst, err := parseSessionID(tt.in)
		switch {
		case tt.ok && (err != nil || sid != tt.sid || serial != tt.serial || inst != tt.inst):
			t.Errorf("parseSessionID(%q) = %d,%d,%d, %v; want %d,%d,%d", tt.in, sid, serial, inst, err, tt.sid, tt.serial, tt.inst)
		case !tt.ok && !errors.Is(err, dialects.ErrInvalid):
			t.Errorf("parseSessionID(%q): %v; want ErrInvalid", tt.in, err)
		}
	}
}

// holdOne takes name with the session locker of db and returns the lease
// and its holder's session id.
func holdOne(t *testing.T, db *Backend, name string) (dialects.Lease, string) {
	t.Helper()
	l, err := db.SessionLocker()
	if err != nil {
		t.Fatal(err)
	}
	l.(*sqlkit.SessionLocker).CheckEvery = 50 * time.Millisecond
	lease, err := l.Acquire(testCtx(t), name, dialects.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e, found, err := db.LockAdmin().SessionLock(testCtx(t), name)
	if err != nil || !found || e.Holder == nil || e.Holder.SessionID == "" {
		t.Fatalf("SessionLock: %+v, %v, %v", e, found, err)
	}
	return lease, e.Holder.SessionID
}

func TestKillSimulated(t *testing.T) {
	t.Run("kill frees the lock and the holder is told", func(t *testing.T) {
		sim, db := openSim(t, config19c())
		lease, id := holdOne(t, db, "job")
		if err := db.LockAdmin().Kill(testCtx(t), id); err != nil {
			t.Fatalf("Kill(%s): %v", id, err)
		}
		if n := sim.HeldLocks(); n != 0 {
			t.Errorf("%d locks held after Kill returned", n)
		}
		select {
		case <-lease.Done():
		case <-time.After(2 * time.Second):
			t.Fatal("the killed lease's Done did not close")
		}
		if !errors.Is(lease.Err(), dialects.ErrLeaseLost) {
			t.Errorf("lease.Err() = %v; want ErrLeaseLost", lease.Err())
		}
		if err := db.LockAdmin().Kill(testCtx(t), id); !errors.Is(err, dialects.ErrInvalid) {
			t.Errorf("killing a session that is gone: %v; want ErrInvalid (ORA-00030)", err)
		}
	})
	t.Run("marked for kill, freed within the wait", func(t *testing.T) {
		cfg := config19c()
		cfg.MarkForKill = 300 * time.Millisecond
		sim, db := openSim(t, cfg)
		_, id := holdOne(t, db, "job")
		start := time.Now()
		if err := db.LockAdmin().Kill(testCtx(t), id); err != nil {
			t.Fatalf("Kill after ORA-00031 with the locks freed in time: %v", err)
		}
		if took := time.Since(start); took < 250*time.Millisecond {
			t.Errorf("Kill returned after %s, before the marked session freed its locks", took)
		}
		if n := sim.HeldLocks(); n != 0 {
			t.Errorf("%d locks held after Kill returned", n)
		}
	})
	t.Run("marked for kill, still holding after the wait", func(t *testing.T) {
		cfg := config19c()
		cfg.MarkForKill = 3 * time.Second
		_, db := openSim(t, cfg)
		_, id := holdOne(t, db, "job")
		err := (&SessionOps{KillWait: 200 * time.Millisecond}).kill(testCtx(t), db.SQL, id)
		var marked *MarkedForKillError
		if !errors.As(err, &marked) || !errors.Is(err, ErrMarkedForKill) || oraCode(err) != oraMarkedForKill {
			t.Fatalf("Kill: %v; want a *MarkedForKillError carrying ORA-00031", err)
		}
		if marked.SessionID != id || !strings.Contains(err.Error(), "really ends") {
			t.Errorf("MarkedForKillError = %v", err)
		}
	})
	t.Run("without ALTER SYSTEM", func(t *testing.T) {
		cfg := config19c()
		cfg.NoAlterSystem = true
		sim, db := openSim(t, cfg)
		_, id := holdOne(t, db, "job")
		err := db.LockAdmin().Kill(testCtx(t), id)
		var pe *dialects.PrivilegeError
		if !errors.As(err, &pe) || pe.Privilege != "ALTER SYSTEM" || pe.Grant != "GRANT ALTER SYSTEM TO APP" {
			t.Fatalf("Kill without the privilege: %v; want a *dialects.PrivilegeError for ALTER SYSTEM", err)
		}
		if !strings.Contains(err.Error(), "rdsadmin") {
			t.Errorf("the error does not mention the RDS way: %v", err)
		}
		if n := sim.HeldLocks(); n != 1 {
			t.Errorf("a refused kill changed the locks: %d held", n)
		}
	})
	t.Run("bad ids never reach the server", func(t *testing.T) {
		sim := newSim(t, config19c())
		db, log := sim.Open(t)
		for _, id := range []string{"1,2' IMMEDIATE", "abc", "1;2"} {
			if err := (&SessionOps{}).kill(testCtx(t), db, id); !errors.Is(err, dialects.ErrInvalid) {
				t.Errorf("Kill(%q): %v; want ErrInvalid", id, err)
			}
		}
		if n := len(log.Statements()); n != 0 {
			t.Errorf("%d statements sent for invalid ids", n)
		}
	})
}
