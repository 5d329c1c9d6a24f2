package postgres

import (
	"database/sql"
	"strconv"
	"strings"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/claimtable"
)

// ClaimBuilder implements claimtable.Claimant: the same SQL on every
// product of the family.
func (b *Backend) ClaimBuilder() claimtable.Builder { return ClaimBuilder{} }

// ClaimBuilder writes the task-row claim SQL of the PostgreSQL family
// (claimtable.Builder). Skip-locked claims are one statement: a CTE that
// selects and locks up to n due rows FOR UPDATE SKIP LOCKED, and an
// UPDATE … FROM it … RETURNING. The CTE form, not UPDATE … WHERE id IN
// (SELECT … FOR UPDATE SKIP LOCKED LIMIT n): an IN sub-select may be
// planned as a join that locks and updates more than n rows (PostgreSQL
// BUG #15715); a CTE that calls clock_timestamp() is volatile and always
// runs once. Optimistic claims (CockroachDB, whose row locks are
// best-effort) use the engine's version-checked UPDATEs.
type ClaimBuilder struct{}

var (
	_ claimtable.Builder = ClaimBuilder{}
	_ claimtable.Retrier = ClaimBuilder{}
)

// IsRetryable reports SQLSTATE 40001, after which CockroachDB and
// YugabyteDB changed nothing and the claim is sent again.
func (ClaimBuilder) IsRetryable(err error) bool { return Builder{}.IsRetryable(err) }

// Dialect is "postgres".
func (ClaimBuilder) Dialect() string { return Name }

// Param is $i with a cast, so the server needs no inference.
func (ClaimBuilder) Param(i int, k claimtable.Kind) string {
	p := "$" + strconv.Itoa(i)
	switch k {
	case claimtable.KindText:
		return p + "::text"
	case claimtable.KindBytes:
		return p + "::bytea"
	}
	return p + "::bigint"
}

// Now is clock_timestamp() in UTC cut to milliseconds (now() would be the
// transaction start).
func (ClaimBuilder) Now() string { return claimNow }

// claimNow is the database's now of one claim statement, read once: a
// scalar subquery is evaluated once per statement, where now itself, a
// volatile function, would be evaluated again for every row the claim's
// WHERE looks at.
const claimNow = "(SELECT " + now + ")"

// PlusMs adds the bound milliseconds.
func (ClaimBuilder) PlusMs(ts, param string) string {
	return "(" + ts + " + " + param + " * interval '1 millisecond')"
}

// EpochMs is the timestamp as bigint milliseconds.
func (ClaimBuilder) EpochMs(ts string) string { return epochMs(ts) }

// Select is SELECT … [LIMIT n] [FOR UPDATE SKIP LOCKED].
func (ClaimBuilder) Select(s claimtable.Select) string {
	return genericSelect(s, " LIMIT ", " FOR UPDATE SKIP LOCKED")
}

// LimitsLocked is true: LIMIT and FOR UPDATE SKIP LOCKED go together.
func (ClaimBuilder) LimitsLocked() bool { return true }

// Single is the CTE claim for skip-locked; optimistic claims take the
// engine's version-checked path.
func (ClaimBuilder) Single(strategy dialects.ClaimStrategy, c claimtable.SingleClaim) (string, bool) {
	if strategy != dialects.ClaimSkipLocked {
		return "", false
	}
	return "WITH picked AS (\n" +
		"  SELECT " + c.ID + " FROM " + c.Table + "\n" +
		"  WHERE " + c.Where + "\n" +
		"  ORDER BY " + c.OrderBy + "\n" +
		"  LIMIT " + c.Limit + "\n" +
		"  FOR UPDATE SKIP LOCKED\n" +
		")\n" +
		"UPDATE " + c.Table + " AS t SET " + strings.Join(c.Set, ", ") + "\n" +
		"FROM picked WHERE t." + c.ID + " = picked." + c.ID + "\n" +
		"RETURNING " + strings.Join(c.Returning("t."), ", "), true
}

// Strategies are skip-locked and optimistic.
func (ClaimBuilder) Strategies() []dialects.ClaimStrategy {
	return []dialects.ClaimStrategy{dialects.ClaimSkipLocked, dialects.ClaimOptimistic}
}

// TxOptions is the default: READ COMMITTED, where a locked row that
// another transaction changed is re-read before it is claimed.
func (ClaimBuilder) TxOptions() *sql.TxOptions { return nil }

// MaxParams is the protocol's 65,535 bound parameters.
func (ClaimBuilder) MaxParams() int { return 65535 }

// MultiRowInsert is true.
func (ClaimBuilder) MultiRowInsert() bool { return true }

// Create is the default task table with a bigserial id (PostgreSQL 9.6+,
// CockroachDB, YugabyteDB) and the claim index.
func (ClaimBuilder) Create(t claimtable.Table) []string {
	c := t.Columns
	return []string{
		"CREATE TABLE IF NOT EXISTS " + t.Name + " (\n" +
			"  " + c.ID + " bigserial PRIMARY KEY,\n" +
			"  " + c.Type + " varchar(255) NOT NULL DEFAULT '',\n" +
			"  " + c.Payload + " bytea,\n" +
			"  " + c.Status + " varchar(32) NOT NULL,\n" +
			"  " + c.DueAt + " timestamp(3) NOT NULL,\n" +
			"  " + c.Priority + " bigint NOT NULL DEFAULT 0,\n" +
			"  " + c.Retries + " integer NOT NULL DEFAULT 0,\n" +
			"  " + c.MaxRetries + " integer NOT NULL DEFAULT 3,\n" +
			"  " + c.Owner + " varchar(255),\n" +
			"  " + c.ClaimedUntil + " timestamp(3),\n" +
			"  " + c.Version + " bigint NOT NULL DEFAULT 0,\n" +
			"  " + c.UpdatedAt + " timestamp(3) NOT NULL\n" +
			")",
		"CREATE INDEX IF NOT EXISTS " + claimIndex(t.Name) + " ON " + t.Name + " (" + c.Status + ", " + c.Priority + " DESC, " + c.DueAt + ")",
	}
}

// IsExists is false: every CREATE says IF NOT EXISTS.
func (ClaimBuilder) IsExists(error) bool { return false }

// IsMissingTable reports SQLSTATE 42P01.
func (ClaimBuilder) IsMissingTable(err error) bool { return hasCode(err, codeUndefinedTable) }

// claimIndex names the claim index after the table, without its schema.
func claimIndex(table string) string {
	if i := strings.LastIndexByte(table, '.'); i >= 0 {
		table = table[i+1:]
	}
	return table + "_claim_idx"
}

// genericSelect assembles SELECT … FROM … WHERE … ORDER BY … with the
// limit keyword and the lock clause given.
func genericSelect(s claimtable.Select, limit, lock string) string {
	q := "SELECT " + strings.Join(s.Columns, ", ") + " FROM " + s.Table
	if s.Where != "" {
		q += " WHERE " + s.Where
	}
	if s.OrderBy != "" {
		q += " ORDER BY " + s.OrderBy
	}
	if s.Limit != "" {
		q += limit + s.Limit
	}
	if s.Lock {
		q += lock
	}
	return q
}

var _ claimtable.Finisher = ClaimBuilder{}

// FinishRows is 2,000 rows per finish statement (five to eight bound
// values a row, far below the protocol's 65,535).
func (ClaimBuilder) FinishRows() int { return 2000 }

// FinishSQL is the batch finish in one statement: an UPDATE of the rows
// still held — each row checked on its own for the owner, its version and
// the claimed status — whose SET gives each row its outcome (done; ready
// again after its back-off or failed for good; given back), and RETURNING
// the ids it changed. Every expression on the right reads the row as it
// was, as the standard says.
func (b ClaimBuilder) FinishSQL(f *claimtable.Finish) claimtable.FinishStatement {
	c := f.Columns
	var w strings.Builder
	w.WriteString("UPDATE " + f.Table + " SET\n  " + f.Outcomes(func(ms string) string { return b.PlusMs(claimNow, ms) }))
	if r := f.RetriesSet(); r != "" {
		w.WriteString(r + ",\n  ")
	}
	w.WriteString(c.ClaimedUntil + " = NULL, " + c.Version + " = " + c.Version + " + 1")
	if c.UpdatedAt != "" {
		w.WriteString(", " + c.UpdatedAt + " = " + claimNow)
	}
	w.WriteString("\nWHERE " + f.Held() + "\nRETURNING " + c.ID)
	return claimtable.FinishStatement{Text: w.String(), Report: claimtable.ReportRows}
}
