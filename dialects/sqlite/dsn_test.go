package sqlite_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"github.com/schedlock/schedlock/dialects/sqlite"
)

func TestDSN(t *testing.T) {
	const both = "_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)"
	for _, tc := range []struct{ in, want string }{
		{"locks.db", "locks.db?" + both},
		{"/var/lib/app/locks.db", "/var/lib/app/locks.db?" + both},
		{"file:locks.db", "file:locks.db?" + both},
		{"file:locks.db?mode=rwc", "file:locks.db?mode=rwc&" + both},
		{"locks.db?", "locks.db?" + both},
		{"locks.db?_pragma=busy_timeout(50)", "locks.db?_pragma=busy_timeout(50)&_pragma=journal_mode(WAL)"},
		{"locks.db?_busy_timeout=50", "locks.db?_busy_timeout=50&_pragma=journal_mode(WAL)"},
		{"locks.db?_pragma=JOURNAL_MODE(delete)", "locks.db?_pragma=JOURNAL_MODE(delete)&_pragma=busy_timeout(10000)"},
		{"locks.db?_journal_mode=TRUNCATE&_timeout=1", "locks.db?_journal_mode=TRUNCATE&_timeout=1"},
	} {
		if got := sqlite.DSN(tc.in); got != tc.want {
			t.Errorf("DSN(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestDSNAppliesPragmas proves the driver takes the settings DSN adds.
func TestDSNAppliesPragmas(t *testing.T) {
	db, err := sql.Open(sqlite.DriverName, sqlite.DSN(filepath.Join(t.TempDir(), "p.db")))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	var timeout int
	var mode string
	if err := db.QueryRowContext(ctx, "PRAGMA busy_timeout").Scan(&timeout); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		t.Fatal(err)
	}
	if timeout != sqlite.BusyTimeoutMs || !strings.EqualFold(mode, "wal") {
		t.Fatalf("busy_timeout = %d, journal_mode = %q; want %d, wal", timeout, mode, sqlite.BusyTimeoutMs)
	}
}
