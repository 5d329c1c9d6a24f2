package dameng

import (
	"strings"

	"github.com/schedlock/schedlock/dialects/claimtable"
	"github.com/schedlock/schedlock/dialects/internal/oralike"
)

// ClaimBuilder implements claimtable.Claimant: DM8's claim SQL.
func (b *Backend) ClaimBuilder() claimtable.Builder { return ClaimBuilder{} }

// ClaimBuilder writes Dameng DM8's task-row claim SQL (claimtable.Builder).
// It follows Oracle's: a skip-locked claim opens SELECT … FOR UPDATE SKIP
// LOCKED without a row limit in a transaction (database/sql's BeginTx,
// as DM's driver commits every statement run outside one), reads the n
// rows it wants, updates them by id and commits; unlocked reads are
// limited with ROWNUM. Whether DM accepts LIMIT beside FOR UPDATE SKIP
// LOCKED is not verified here, so it is not used. Placeholders are "?".
type ClaimBuilder struct {
	oralike.ClaimRules // Select, LimitsLocked, Single, Strategies, TxOptions, MaxParams, MultiRowInsert
}

var _ claimtable.Builder = ClaimBuilder{}

// Dialect is "dm".
func (ClaimBuilder) Dialect() string { return Name }

// Param is "?".
func (ClaimBuilder) Param(int, claimtable.Kind) string { return "?" }

// Now is SYSTIMESTAMP in UTC as TIMESTAMP(3).
func (ClaimBuilder) Now() string { return sqlNow }

// PlusMs adds the bound milliseconds.
func (ClaimBuilder) PlusMs(ts, param string) string { return "(" + plusMs(ts, param) + ")" }

// EpochMs is the timestamp as BIGINT milliseconds.
func (ClaimBuilder) EpochMs(ts string) string { return epochMs(ts) }

// Create is the default task table (IDENTITY id) and its index.
func (ClaimBuilder) Create(t claimtable.Table) []string {
	c := t.Columns
	idx := t.Name
	if i := strings.LastIndexByte(idx, '.'); i >= 0 {
		idx = idx[i+1:]
	}
	return []string{
		"CREATE TABLE " + t.Name + " (\n" +
			"  " + c.ID + " BIGINT IDENTITY(1, 1) PRIMARY KEY,\n" +
			"  " + c.Type + " VARCHAR(255 CHAR),\n" +
			"  " + c.Payload + " BLOB,\n" +
			"  " + c.Status + " VARCHAR(32 CHAR) NOT NULL,\n" +
			"  " + c.DueAt + " TIMESTAMP(3) NOT NULL,\n" +
			"  " + c.Priority + " BIGINT DEFAULT 0 NOT NULL,\n" +
			"  " + c.Retries + " INT DEFAULT 0 NOT NULL,\n" +
			"  " + c.MaxRetries + " INT DEFAULT 3 NOT NULL,\n" +
			"  " + c.Owner + " VARCHAR(255 CHAR),\n" +
			"  " + c.ClaimedUntil + " TIMESTAMP(3),\n" +
			"  " + c.Version + " BIGINT DEFAULT 0 NOT NULL,\n" +
			"  " + c.UpdatedAt + " TIMESTAMP(3) NOT NULL\n" +
			")",
		"CREATE INDEX " + idx + "_cidx ON " + t.Name + " (" + c.Status + ", " + c.Priority + " DESC, " + c.DueAt + ")",
	}
}

// IsExists reports a CREATE of an object that exists (DM's message says
// so; its code is not verified here).
func (ClaimBuilder) IsExists(err error) bool {
	return err != nil && (strings.Contains(err.Error(), "已存在") || strings.Contains(strings.ToLower(err.Error()), "already exist"))
}

// IsMissingTable reports -2106.
func (ClaimBuilder) IsMissingTable(err error) bool { return IsMissingTable(err) }

var _ claimtable.Finisher = ClaimBuilder{}

// FinishRows is 500 rows per finish statement, as Oracle's
// (IN lists of at most 1,000 expressions).
func (ClaimBuilder) FinishRows() int { return 500 }

// FinishSQL is the batch finish as a short transaction, not one statement:
// DM8 has no UPDATE … RETURNING that returns rows to the client (its
// RETURNING INTO, as Oracle's, fills variables of a block), so the rows
// changed are learnt by locking them first.
// Lock selects FOR UPDATE the ids of the rows still held — each row
// checked on its own for the owner, its version and the claimed status —
// and the UPDATE then gives each row its outcome (done; ready again after
// its back-off or failed for good; given back) with the same checks, so it
// changes exactly the rows locked; the commit ends it. Every expression on
// the right reads the row as it was.
func (b ClaimBuilder) FinishSQL(f *claimtable.Finish) claimtable.FinishStatement {
	lock := "SELECT " + f.Columns.ID + " FROM " + f.Table + " WHERE " + f.Held() + " FOR UPDATE"
	lockArgs := f.TakeArgs()
	c := f.Columns
	var w strings.Builder
	w.WriteString("UPDATE " + f.Table + " SET\n  " + f.Outcomes(func(ms string) string { return b.PlusMs(sqlNow, ms) }))
	if r := f.RetriesSet(); r != "" {
		w.WriteString(r + ",\n  ")
	}
	w.WriteString(c.ClaimedUntil + " = NULL, " + c.Version + " = " + c.Version + " + 1")
	if c.UpdatedAt != "" {
		w.WriteString(", " + c.UpdatedAt + " = " + sqlNow)
	}
	w.WriteString("\nWHERE " + f.Held())
	return claimtable.FinishStatement{Text: w.String(), Report: claimtable.ReportLocked, Lock: lock, LockArgs: lockArgs}
}
