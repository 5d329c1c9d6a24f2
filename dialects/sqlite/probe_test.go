package sqlite_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/sqlite"
)

func probeFile(t *testing.T, db *sql.DB, opts dialects.ProbeOptions) dialects.Capabilities {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	d, err := sqlite.New(ctx, db, nil)
	if err != nil {
		t.Fatal(err)
	}
	caps, err := d.Probe(ctx, opts)
	if err != nil {
		t.Fatalf("probe: %v", err)
	}
	return caps
}

func tableNames(t *testing.T, db *sql.DB) []string {
	t.Helper()
	rows, err := db.Query("SELECT name FROM sqlite_master")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	return names
}

func TestProbe(t *testing.T) {
	db := openFile(t)
	caps := probeFile(t, db, dialects.ProbeOptions{})

	for name, c := range map[string]dialects.Capability{
		"session_locks": caps.SessionLocks, "skip_locked": caps.SkipLocked, "nowait": caps.NoWait,
		"lock_listing": caps.LockListing, "kill_sessions": caps.KillSessions,
	} {
		if c.Supported || c.Status != dialects.StatusNo || c.Detail == "" {
			t.Errorf("%s = %+v on SQLite, want no with a reason", name, c)
		}
	}
	if caps.Isolation.Detail != "serializable" {
		t.Errorf("isolation %q, want serializable", caps.Isolation.Detail)
	}
	r := caps.Recommended
	if r.LockStrategy != dialects.StrategyTable || r.ClaimStrategy != dialects.ClaimOptimistic {
		t.Errorf("recommended %s / %s, want table / optimistic", r.LockStrategy, r.ClaimStrategy)
	}
	if len(caps.MissingPrivileges) != 0 {
		t.Errorf("a writable file misses privileges: %+v", caps.MissingPrivileges)
	}
	if !caps.Clock.Measured || caps.Clock.Skew.Abs() >= time.Second {
		t.Errorf("clock %+v: SQLite's 'now' is the host clock; want a measured skew under 1s", caps.Clock)
	}
	if names := tableNames(t, db); len(names) != 0 {
		t.Errorf("probe left %v behind", names)
	}
}

func TestProbeReadOnlyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ro.db")
	rw, err := sql.Open(sqlite.DriverName, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rw.Exec("CREATE TABLE keep (id INTEGER)"); err != nil {
		t.Fatal(err)
	}
	_ = rw.Close()
	db, err := sql.Open(sqlite.DriverName, "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	caps := probeFile(t, db, dialects.ProbeOptions{})
	if len(caps.MissingPrivileges) != 1 || !strings.Contains(caps.MissingPrivileges[0].Privilege, "write access") {
		t.Errorf("missing privileges on a read-only file: %+v, want write access", caps.MissingPrivileges)
	}
	caps = probeFile(t, db, dialects.ProbeOptions{ReadOnly: true})
	if len(caps.MissingPrivileges) != 0 {
		t.Errorf("--read-only still tried a write: %+v", caps.MissingPrivileges)
	}
	if info, err := os.Stat(path); err != nil || info.Size() == 0 {
		t.Fatalf("file gone: %v", err)
	}
}

func TestProbeQueryOnly(t *testing.T) {
	db := openFile(t)
	db.SetMaxOpenConns(1)
	if _, err := db.Exec("PRAGMA query_only = ON"); err != nil {
		t.Fatal(err)
	}
	caps := probeFile(t, db, dialects.ProbeOptions{ReadOnly: true})
	if len(caps.MissingPrivileges) != 1 || caps.MissingPrivileges[0].Grant != "PRAGMA query_only = OFF" {
		t.Errorf("missing privileges under query_only: %+v", caps.MissingPrivileges)
	}
}
