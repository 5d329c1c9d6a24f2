package sqlserver

import (
	"database/sql"
	"fmt"
	"strconv"
	"strings"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/claimtable"
)

// ClaimBuilder implements claimtable.Claimant: the claims of this
// database, with READCOMMITTEDLOCK when it runs READ_COMMITTED_SNAPSHOT.
func (b *Backend) ClaimBuilder() claimtable.Builder { return ClaimBuilder{RCSI: b.RCSI} }

// ClaimBuilder writes SQL Server's task-row claim SQL (claimtable.Builder).
// A readpast claim is one statement: an updatable CTE that takes the
// first n due rows in claim order WITH (UPDLOCK, READPAST, ROWLOCK) and an
// UPDATE of the CTE with OUTPUT inserted.…; UPDATE TOP (n) alone would
// take n rows in no defined order. UPDLOCK makes a second worker skip a
// row the first one has read (READPAST alone skips only rows already
// locked, and a plain read holds its shared lock too briefly).
//
// READPAST works only under READ COMMITTED and REPEATABLE READ. With
// READ_COMMITTED_SNAPSHOT on (Azure SQL Database's default), read
// committed reads row versions and the server refuses READPAST unless
// READCOMMITTEDLOCK is also given, so RCSI adds that hint; a session
// under SNAPSHOT or SERIALIZABLE gets error 650, which MapError explains.
// Parameters are @p1, @p2, …; one statement takes at most 2,100.
type ClaimBuilder struct {
	// RCSI is true when the database runs READ_COMMITTED_SNAPSHOT.
	RCSI bool
}

var (
	_ claimtable.Builder     = ClaimBuilder{}
	_ claimtable.ErrorMapper = ClaimBuilder{}
)

// Dialect is "sqlserver".
func (ClaimBuilder) Dialect() string { return Name }

// Param is @pi.
func (ClaimBuilder) Param(i int, _ claimtable.Kind) string { return "@p" + strconv.Itoa(i) }

// Now is SYSUTCDATETIME() as datetime2(3).
func (ClaimBuilder) Now() string { return nowSQL }

// PlusMs adds the bound milliseconds (in days and milliseconds, so long
// leases do not overflow DATEADD's int).
func (ClaimBuilder) PlusMs(ts, param string) string { return plusMs(ts, param) }

// EpochMs is the datetime2 as bigint milliseconds.
func (ClaimBuilder) EpochMs(ts string) string { return epochMs(ts) }

// hints are the claim's table hints.
func (b ClaimBuilder) hints() string {
	h := "UPDLOCK, READPAST, ROWLOCK"
	if b.RCSI {
		h += ", READCOMMITTEDLOCK"
	}
	return "WITH (" + h + ")"
}

// Select is SELECT [TOP (n)] … [WITH (UPDLOCK, READPAST, ROWLOCK)].
func (b ClaimBuilder) Select(s claimtable.Select) string {
	q := "SELECT "
	if s.Limit != "" {
		q += "TOP (" + s.Limit + ") "
	}
	q += strings.Join(s.Columns, ", ") + " FROM " + s.Table
	if s.Lock {
		q += " " + b.hints()
	}
	if s.Where != "" {
		q += " WHERE " + s.Where
	}
	if s.OrderBy != "" {
		q += " ORDER BY " + s.OrderBy
	}
	return q
}

// LimitsLocked is true.
func (ClaimBuilder) LimitsLocked() bool { return true }

// Single is the CTE claim for readpast.
func (b ClaimBuilder) Single(strategy dialects.ClaimStrategy, c claimtable.SingleClaim) (string, bool) {
	if strategy != dialects.ClaimReadPast {
		return "", false
	}
	return "WITH picked AS (\n" +
		"  SELECT TOP (" + c.Limit + ") * FROM " + c.Table + " " + b.hints() + "\n" +
		"  WHERE " + c.Where + "\n" +
		"  ORDER BY " + c.OrderBy + "\n" +
		")\n" +
		"UPDATE picked SET " + strings.Join(c.Set, ", ") + "\n" +
		"OUTPUT " + strings.Join(c.Returning("inserted."), ", ") + ";", true
}

// Strategies are readpast and optimistic.
func (ClaimBuilder) Strategies() []dialects.ClaimStrategy {
	return []dialects.ClaimStrategy{dialects.ClaimReadPast, dialects.ClaimOptimistic}
}

// TxOptions is the default.
func (ClaimBuilder) TxOptions() *sql.TxOptions { return nil }

// MaxParams is SQL Server's 2,100 parameters per request.
func (ClaimBuilder) MaxParams() int { return 2100 }

// MultiRowInsert is true (up to 1,000 rows per VALUES; the engine sends
// fewer).
func (ClaimBuilder) MultiRowInsert() bool { return true }

// Create is the default task table and its claim index, each guarded by a
// test for the object, as SQL Server before 2016 has no IF NOT EXISTS.
func (ClaimBuilder) Create(t claimtable.Table) []string {
	c := t.Columns
	idx := t.Name
	if i := strings.LastIndexByte(idx, '.'); i >= 0 {
		idx = idx[i+1:]
	}
	idx += "_claim_idx"
	return []string{
		"IF OBJECT_ID(N'" + t.Name + "', N'U') IS NULL CREATE TABLE " + t.Name + " (\n" +
			"  " + c.ID + " bigint IDENTITY(1,1) NOT NULL PRIMARY KEY,\n" +
			"  " + c.Type + " nvarchar(255) NOT NULL DEFAULT '',\n" +
			"  " + c.Payload + " varbinary(max) NULL,\n" +
			"  " + c.Status + " nvarchar(32) NOT NULL,\n" +
			"  " + c.DueAt + " datetime2(3) NOT NULL,\n" +
			"  " + c.Priority + " bigint NOT NULL DEFAULT 0,\n" +
			"  " + c.Retries + " int NOT NULL DEFAULT 0,\n" +
			"  " + c.MaxRetries + " int NOT NULL DEFAULT 3,\n" +
			"  " + c.Owner + " nvarchar(255) NULL,\n" +
			"  " + c.ClaimedUntil + " datetime2(3) NULL,\n" +
			"  " + c.Version + " bigint NOT NULL DEFAULT 0,\n" +
			"  " + c.UpdatedAt + " datetime2(3) NOT NULL\n" +
			")",
		"IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE name = N'" + idx + "' AND object_id = OBJECT_ID(N'" + t.Name + "')) " +
			"CREATE INDEX " + idx + " ON " + t.Name + " (" + c.Status + ", " + c.Priority + " DESC, " + c.DueAt + ")",
	}
}

// IsExists is false: every CREATE is guarded.
func (ClaimBuilder) IsExists(error) bool { return false }

// IsMissingTable reports error 208.
func (ClaimBuilder) IsMissingTable(err error) bool { return Builder{}.IsMissingTable(err) }

// MapError explains error 650: READPAST refused by the session's
// isolation level.
func (ClaimBuilder) MapError(err error) error {
	if hasNumber(err, errReadPastIsolation) {
		return fmt.Errorf("%w: READPAST needs READ COMMITTED or REPEATABLE READ, and this session runs another isolation level (SNAPSHOT or SERIALIZABLE): claim with the optimistic strategy, or run the claims under READ COMMITTED: %w", dialects.ErrUnsupported, err)
	}
	return err
}

var _ claimtable.Finisher = ClaimBuilder{}

// FinishRows is 250 rows per finish statement: up to eight bound values
// a row stay below the 2,100 parameters of one request.
func (ClaimBuilder) FinishRows() int { return 250 }

// FinishSQL is the batch finish in one statement: an UPDATE of the rows
// still held — each row checked on its own for the owner, its version and
// the claimed status — whose SET gives each row its outcome (done; ready
// again after its back-off or failed for good; given back), with OUTPUT
// inserted.id naming the rows it changed. Every expression on the right
// reads the row as it was.
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
	w.WriteString("\nOUTPUT inserted." + c.ID + "\nWHERE " + f.Held() + ";")
	return claimtable.FinishStatement{Text: w.String(), Report: claimtable.ReportRows}
}
