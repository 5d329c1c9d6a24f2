package mysql

import (
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/schedlock/schedlock/dialects/claimtable/claimtest"
)

// TestClaimsLive runs the claim conformance suite on the live server with
// every session defaulting to REPEATABLE READ (the server's own default,
// set explicitly here): the claims must still take each row once, as
// their transactions run under READ COMMITTED.
func TestClaimsLive(t *testing.T) {
	sqlDB := openLive(t, func(c *mysql.Config) {
		if c.Params == nil {
			c.Params = map[string]string{}
		}
		c.Params["tx_isolation"] = "'REPEATABLE-READ'"
	})
	db, err := New(testContext(t), sqlDB, nil)
	if err != nil {
		t.Fatal(err)
	}
	claimtest.Run(t, db)
}

// TestClaimTransactionIsReadCommitted proves the claim transaction's
// isolation on a session whose default is REPEATABLE READ.
func TestClaimTransactionIsReadCommitted(t *testing.T) {
	sqlDB := openLive(t, func(c *mysql.Config) {
		if c.Params == nil {
			c.Params = map[string]string{}
		}
		c.Params["tx_isolation"] = "'REPEATABLE-READ'"
	})
	ctx := testContext(t)
	table := uniqueName("sl_iso_")
	if _, err := sqlDB.ExecContext(ctx, "CREATE TABLE "+table+" (id INT PRIMARY KEY) ENGINE=InnoDB"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = sqlDB.ExecContext(ctx, "DROP TABLE "+table) })
	if _, err := sqlDB.ExecContext(ctx, "INSERT INTO "+table+" VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	tx, err := sqlDB.BeginTx(ctx, ClaimBuilder{}.TxOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }() // before the DROP: it waits for the row lock
	// @@tx_isolation shows the session's default, not the transaction's:
	// InnoDB's own view of the running transaction says what it runs
	// under, once the transaction has read something.
	if _, err := tx.ExecContext(ctx, "SELECT id FROM "+table+" FOR UPDATE"); err != nil {
		t.Fatal(err)
	}
	var level string
	err = tx.QueryRowContext(ctx, "SELECT trx_isolation_level FROM information_schema.innodb_trx WHERE trx_mysql_thread_id = CONNECTION_ID()").Scan(&level)
	if err != nil {
		t.Fatalf("read the transaction's isolation level: %v", err)
	}
	if !strings.EqualFold(level, "READ COMMITTED") {
		t.Fatalf("claim transaction runs under %s; want READ-COMMITTED", level)
	}
}

// TestClaimSelfcheckLive runs selfcheck's claim.* checks on the live
// server, sessions defaulting to REPEATABLE READ.
func TestClaimSelfcheckLive(t *testing.T) {
	sqlDB := openLive(t, func(c *mysql.Config) {
		if c.Params == nil {
			c.Params = map[string]string{}
		}
		c.Params["tx_isolation"] = "'REPEATABLE-READ'"
	})
	db, err := New(testContext(t), sqlDB, nil)
	if err != nil {
		t.Fatal(err)
	}
	claimtest.RunChecks(t, db)
}
