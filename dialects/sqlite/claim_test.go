package sqlite_test

import (
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/schedlock/schedlock/dialects/claimtable/claimtest"
	"github.com/schedlock/schedlock/dialects/sqlite"
)

// TestClaims runs the claim conformance suite on a SQLite file.
func TestClaims(t *testing.T) {
	sqlDB, err := sql.Open(sqlite.DriverName, sqlite.DSN(filepath.Join(t.TempDir(), "claims.db")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sqlDB.Close() })
	db, err := sqlite.New(t.Context(), sqlDB, nil)
	if err != nil {
		t.Fatal(err)
	}
	claimtest.Run(t, db)
}

// TestClaimSelfcheck runs selfcheck's claim.* checks on a SQLite file.
func TestClaimSelfcheck(t *testing.T) {
	sqlDB, err := sql.Open(sqlite.DriverName, sqlite.DSN(filepath.Join(t.TempDir(), "claims.db")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sqlDB.Close() })
	db, err := sqlite.New(t.Context(), sqlDB, nil)
	if err != nil {
		t.Fatal(err)
	}
	claimtest.RunChecks(t, db)
}
