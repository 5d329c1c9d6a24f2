package sqlite

import (
	"database/sql"
	"strconv"
	"strings"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/claimtable"
)

// ClaimBuilder implements claimtable.Claimant.
func (b *Backend) ClaimBuilder() claimtable.Builder { return ClaimBuilder{} }

// ClaimBuilder writes SQLite's task-row claim SQL (claimtable.Builder).
// SQLite has no row locks — a writer locks the whole database — so claims
// are optimistic, and one statement: UPDATE … WHERE id IN (SELECT … LIMIT
// n) RETURNING … runs under the write lock from its sub-select to its last
// row, so no other writer can claim the rows between (SQLite 3.35+).
// Placeholders are numbered (?1, ?2, …). Times are stored as TEXT in UTC,
// as the lease table's are.
type ClaimBuilder struct{}

var _ claimtable.Builder = ClaimBuilder{}

// Dialect is "sqlite".
func (ClaimBuilder) Dialect() string { return Name }

// Param is ?i.
func (ClaimBuilder) Param(i int, _ claimtable.Kind) string { return "?" + strconv.Itoa(i) }

// Now is strftime(…, 'now') as stored text.
func (ClaimBuilder) Now() string { return nowSQL }

// PlusMs adds the bound milliseconds with an "N.NNN seconds" modifier.
func (ClaimBuilder) PlusMs(ts, param string) string {
	return `strftime(` + timeFormat + `, ` + ts + `, (` + param + ` / 1000.0) || ' seconds')`
}

// EpochMs is the stored time as integer milliseconds.
func (ClaimBuilder) EpochMs(ts string) string { return epochMs(ts) }

// Select is SELECT … [LIMIT n]; SQLite has no row locks to take.
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
	return q
}

// LimitsLocked is true (there is no lock to limit).
func (ClaimBuilder) LimitsLocked() bool { return true }

// Single is the one-statement optimistic claim.
func (ClaimBuilder) Single(strategy dialects.ClaimStrategy, c claimtable.SingleClaim) (string, bool) {
	if strategy != dialects.ClaimOptimistic {
		return "", false
	}
	return "UPDATE " + c.Table + " SET " + strings.Join(c.Set, ", ") + "\n" +
		"WHERE " + c.ID + " IN (\n" +
		"  SELECT " + c.ID + " FROM " + c.Table + "\n" +
		"  WHERE " + c.Where + "\n" +
		"  ORDER BY " + c.OrderBy + "\n" +
		"  LIMIT " + c.Limit + "\n" +
		")\n" +
		"RETURNING " + strings.Join(c.Returning(""), ", "), true
}

// Strategies is optimistic only.
func (ClaimBuilder) Strategies() []dialects.ClaimStrategy {
	return []dialects.ClaimStrategy{dialects.ClaimOptimistic}
}

// PrepareWrites is true: SQLite parses every statement it is not handed
// prepared, so the completions and batch finishes run prepared, as the
// claims do (claimtable.WritePreparer).
func (ClaimBuilder) PrepareWrites() bool { return true }

// TxOptions is the default.
func (ClaimBuilder) TxOptions() *sql.TxOptions { return nil }

// MaxParams is SQLITE_MAX_VARIABLE_NUMBER's default since 3.32, 32,766.
func (ClaimBuilder) MaxParams() int { return 32766 }

// MultiRowInsert is true.
func (ClaimBuilder) MultiRowInsert() bool { return true }

// Create is the default task table and its claim index.
func (ClaimBuilder) Create(t claimtable.Table) []string {
	c := t.Columns
	idx := unqualified(t.Name) + "_claim_idx"
	if i := strings.LastIndexByte(t.Name, '.'); i >= 0 {
		idx = t.Name[:i+1] + idx
	}
	return []string{
		"CREATE TABLE IF NOT EXISTS " + t.Name + " (\n" +
			"  " + c.ID + " INTEGER PRIMARY KEY,\n" +
			"  " + c.Type + " TEXT NOT NULL DEFAULT '',\n" +
			"  " + c.Payload + " BLOB,\n" +
			"  " + c.Status + " TEXT NOT NULL,\n" +
			"  " + c.DueAt + " TEXT NOT NULL,\n" +
			"  " + c.Priority + " INTEGER NOT NULL DEFAULT 0,\n" +
			"  " + c.Retries + " INTEGER NOT NULL DEFAULT 0,\n" +
			"  " + c.MaxRetries + " INTEGER NOT NULL DEFAULT 3,\n" +
			"  " + c.Owner + " TEXT,\n" +
			"  " + c.ClaimedUntil + " TEXT,\n" +
			"  " + c.Version + " INTEGER NOT NULL DEFAULT 0,\n" +
			"  " + c.UpdatedAt + " TEXT NOT NULL\n" +
			")",
		"CREATE INDEX IF NOT EXISTS " + idx + " ON " + unqualified(t.Name) + " (" + c.Status + ", " + c.Priority + " DESC, " + c.DueAt + ")",
	}
}

// IsExists is false: every CREATE says IF NOT EXISTS.
func (ClaimBuilder) IsExists(error) bool { return false }

// IsMissingTable reports "no such table".
func (ClaimBuilder) IsMissingTable(err error) bool { return Builder{}.IsMissingTable(err) }

var _ claimtable.Finisher = ClaimBuilder{}

// FinishRows is 2,000 rows per finish statement (five to eight bound
// values a row, below SQLite's 32,766).
func (ClaimBuilder) FinishRows() int { return 2000 }

// FinishSQL is the batch finish in one statement: an UPDATE of the rows
// still held — each row checked on its own for the owner, its version and
// the claimed status — whose SET gives each row its outcome (done; ready
// again after its back-off or failed for good; given back), RETURNING the
// ids it changed (SQLite 3.35+). Every expression on the right reads the
// row as it was.
func (b ClaimBuilder) FinishSQL(f *claimtable.Finish) claimtable.FinishStatement {
	c := f.Columns
	var w strings.Builder
	w.WriteString("UPDATE " + f.Table + " SET\n  " + f.Outcomes(func(ms string) string { return b.PlusMs(nowSQL, ms) }))
	if r := f.RetriesSet(); r != "" {
		w.WriteString(r + ",\n  ")
	}
	w.WriteString(c.ClaimedUntil + " = NULL, " + c.Version + " = " + c.Version + " + 1")
	if c.UpdatedAt != "" {
		w.WriteString(", " + c.UpdatedAt + " = " + nowSQL)
	}
	w.WriteString("\nWHERE " + f.Held() + "\nRETURNING " + c.ID)
	return claimtable.FinishStatement{Text: w.String(), Report: claimtable.ReportRows}
}
