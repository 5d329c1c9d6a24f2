package mysql

import (
	"database/sql"
	"strings"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/claimtable"
)

// ClaimBuilder implements claimtable.Claimant: one Builder for MySQL,
// MariaDB and TiDB (the strategy to claim with is the probe's
// recommendation).
func (b *Backend) ClaimBuilder() claimtable.Builder { return ClaimBuilder{} }

// ClaimBuilder writes the task-row claim SQL of MySQL, MariaDB and TiDB
// (claimtable.Builder). MySQL has no UPDATE … RETURNING, so a skip-locked
// claim is a short transaction: SELECT … LIMIT n FOR UPDATE SKIP LOCKED
// (the clause after LIMIT, as MySQL 8.0.1+ and MariaDB 10.6+ want it),
// UPDATE … WHERE id IN (…), COMMIT — under READ COMMITTED whatever the
// session's default: under REPEATABLE READ the locking read also takes gap
// and next-key locks, which block other workers' claims instead of letting
// them skip. TiDB and servers without SKIP LOCKED claim optimistically.
type ClaimBuilder struct{}

var _ claimtable.Builder = ClaimBuilder{}

// Dialect is "mysql".
func (ClaimBuilder) Dialect() string { return Name }

// Param is "?".
func (ClaimBuilder) Param(int, claimtable.Kind) string { return "?" }

// Now is UTC_TIMESTAMP(3).
func (ClaimBuilder) Now() string { return sqlNow }

// PlusMs adds the bound milliseconds.
func (ClaimBuilder) PlusMs(ts, param string) string {
	return "TIMESTAMPADD(MICROSECOND, " + param + " * 1000, " + ts + ")"
}

// EpochMs is the DATETIME(3) as integer milliseconds.
func (ClaimBuilder) EpochMs(ts string) string { return epochMs(ts) }

// Select is SELECT … [LIMIT n] [FOR UPDATE SKIP LOCKED].
func (ClaimBuilder) Select(s claimtable.Select) string {
	q := "SELECT " + strings.Join(s.Columns, ", ") + " FROM " + s.Table
	if s.Where != "" {
		q += " WHERE " + s.Where
	}
	if s.OrderBy != "" {
		q += " ORDER BY " + s.OrderBy
	}
	if s.Limit != "" {
		q += " LIMIT " + s.Limit
	}
	if s.Lock {
		q += " FOR UPDATE SKIP LOCKED"
	}
	return q
}

// LimitsLocked is true.
func (ClaimBuilder) LimitsLocked() bool { return true }

// Single is never: MySQL claims in a transaction.
func (ClaimBuilder) Single(dialects.ClaimStrategy, claimtable.SingleClaim) (string, bool) {
	return "", false
}

// Strategies are skip-locked and optimistic.
func (ClaimBuilder) Strategies() []dialects.ClaimStrategy {
	return []dialects.ClaimStrategy{dialects.ClaimSkipLocked, dialects.ClaimOptimistic}
}

// TxOptions is READ COMMITTED (the driver sets it for the one
// transaction).
func (ClaimBuilder) TxOptions() *sql.TxOptions {
	return &sql.TxOptions{Isolation: sql.LevelReadCommitted}
}

// MaxParams is the protocol's 65,535 placeholders.
func (ClaimBuilder) MaxParams() int { return 65535 }

// MultiRowInsert is true.
func (ClaimBuilder) MultiRowInsert() bool { return true }

// Create is the default task table (InnoDB, utf8mb4) with its claim
// index.
func (ClaimBuilder) Create(t claimtable.Table) []string {
	c := t.Columns
	idx := t.Name
	if i := strings.LastIndexByte(idx, '.'); i >= 0 {
		idx = idx[i+1:]
	}
	return []string{"CREATE TABLE IF NOT EXISTS " + t.Name + " (\n" +
		"  " + c.ID + " BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,\n" +
		"  " + c.Type + " VARCHAR(255) NOT NULL DEFAULT '',\n" +
		"  " + c.Payload + " LONGBLOB NULL,\n" +
		"  " + c.Status + " VARCHAR(32) NOT NULL,\n" +
		"  " + c.DueAt + " DATETIME(3) NOT NULL,\n" +
		"  " + c.Priority + " BIGINT NOT NULL DEFAULT 0,\n" +
		"  " + c.Retries + " INT NOT NULL DEFAULT 0,\n" +
		"  " + c.MaxRetries + " INT NOT NULL DEFAULT 3,\n" +
		"  " + c.Owner + " VARCHAR(255) NULL,\n" +
		"  " + c.ClaimedUntil + " DATETIME(3) NULL,\n" +
		"  " + c.Version + " BIGINT NOT NULL DEFAULT 0,\n" +
		"  " + c.UpdatedAt + " DATETIME(3) NOT NULL,\n" +
		"  KEY " + idx + "_claim_idx (" + c.Priority + ", " + c.DueAt + ", " + c.ID + ")\n" +
		") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4"}
}

// IsExists is false: CREATE TABLE IF NOT EXISTS.
func (ClaimBuilder) IsExists(error) bool { return false }

// IsMissingTable reports error 1146.
func (ClaimBuilder) IsMissingTable(err error) bool { return (&Builder{}).IsMissingTable(err) }

var _ claimtable.Finisher = ClaimBuilder{}

// FinishRows is 32 rows per finish statement: one bit each of the mask
// the statement reports (FinishSQL).
func (ClaimBuilder) FinishRows() int { return 32 }

// FinishSQL is the batch finish in one statement: an UPDATE of the rows
// still held — each row checked on its own for the owner, its version and
// the claimed status — whose SET gives each row its outcome (done; ready
// again after its back-off or failed for good; given back).
//
// MySQL and MariaDB before 13.0 have no UPDATE … RETURNING, and the row
// count says how many rows changed, not which. So each changed row adds
// its bit (2^i for the i-th row of the batch) to LAST_INSERT_ID(expr),
// which the server sends back in the statement's OK packet as the last
// insert id: the first changed row starts from the batch's MaskBase (a
// random multiple of 2^32 at or above 2^62, so a value an earlier
// statement left on the connection is not taken for ours), each next one
// adds to it. The call sits in the version's assignment, multiplied by 0.
//
// A single-table UPDATE assigns from left to right, each expression
// seeing the columns assigned before it, so retries is assigned last and
// every other expression reads the row's old retries.
func (b ClaimBuilder) FinishSQL(f *claimtable.Finish) claimtable.FinishStatement {
	c := f.Columns
	var w strings.Builder
	w.WriteString("UPDATE " + f.Table + " SET\n  " + f.Outcomes(func(ms string) string { return b.PlusMs(sqlNow, ms) }))
	w.WriteString(c.ClaimedUntil + " = NULL,\n  ")
	w.WriteString(c.Version + " = " + c.Version + " + 1 + 0 * LAST_INSERT_ID(CASE WHEN LAST_INSERT_ID() >= " + f.Arg(f.MaskBase) +
		" AND LAST_INSERT_ID() < " + f.Arg(f.MaskBase+1<<32) + " THEN LAST_INSERT_ID() ELSE " + f.Arg(f.MaskBase) + " END + CASE " + c.ID)
	for i, r := range f.Rows {
		w.WriteString(" WHEN " + f.Arg(r.ID) + " THEN " + f.Arg(int64(1)<<i))
	}
	w.WriteString(" END)")
	if c.UpdatedAt != "" {
		w.WriteString(",\n  " + c.UpdatedAt + " = " + sqlNow)
	}
	if r := f.RetriesSet(); r != "" {
		w.WriteString(",\n  " + r)
	}
	w.WriteString("\nWHERE " + f.Held())
	return claimtable.FinishStatement{Text: w.String(), Report: claimtable.ReportMask}
}
