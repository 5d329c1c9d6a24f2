package oracle

import (
	"strconv"
	"strings"

	"github.com/schedlock/schedlock/dialects/claimtable"
	"github.com/schedlock/schedlock/dialects/internal/oralike"
)

// ClaimBuilder implements claimtable.Claimant: Oracle's claim SQL, alike
// on every version from 11g Release 2.
func (b *Backend) ClaimBuilder() claimtable.Builder { return ClaimBuilder{} }

// ClaimBuilder writes Oracle's task-row claim SQL (claimtable.Builder).
// Oracle refuses a row-limiting clause with FOR UPDATE (FETCH FIRST …
// FOR UPDATE is ORA-02014), and a ROWNUM filter runs before SKIP LOCKED,
// so a second worker would get no row at all; a skip-locked claim is
// therefore a short transaction that opens SELECT … ORDER BY … FOR UPDATE
// SKIP LOCKED without a limit, reads only the n rows it wants (SKIP
// LOCKED locks rows as they are fetched), updates them by id and commits.
// Unlocked reads are limited with ROWNUM, which 11g has too. IN lists hold
// at most 1,000 expressions (ORA-01795), so id lists are cut below that.
// Placeholders are :1, :2, … in text order.
type ClaimBuilder struct {
	oralike.ClaimRules // Select, LimitsLocked, Single, Strategies, TxOptions, MaxParams, MultiRowInsert
}

var (
	_ claimtable.Builder = ClaimBuilder{}
	_ claimtable.Dropper = ClaimBuilder{}
)

// Dialect is "oracle".
func (ClaimBuilder) Dialect() string { return Name }

// Param is :i.
func (ClaimBuilder) Param(i int, _ claimtable.Kind) string { return ":" + strconv.Itoa(i) }

// Now is SYSTIMESTAMP in UTC as TIMESTAMP(3).
func (ClaimBuilder) Now() string { return sqlNow }

// PlusMs adds the bound milliseconds.
func (ClaimBuilder) PlusMs(ts, param string) string {
	return "(" + ts + " + NUMTODSINTERVAL(" + param + " / 1000, 'SECOND'))"
}

// EpochMs is the timestamp as milliseconds.
func (ClaimBuilder) EpochMs(ts string) string { return epochMs(ts) }

// Create is the default task table, its id sequence and the trigger that
// fills the id from it, and the claim index, each in a PL/SQL block that
// ignores ORA-00955 (name in use). The id comes from a sequence and a
// BEFORE INSERT trigger, not an identity column (12c) or a sequence
// default (12c), so the table is created alike on every version from 11g
// Release 2. The trigger fills only an id the INSERT leaves NULL, so it is
// replaced harmlessly when the table exists already.
func (ClaimBuilder) Create(t claimtable.Table) []string {
	c := t.Columns
	seq := claimSequence(t)
	table := "CREATE TABLE " + t.Name + " (" +
		c.ID + " NUMBER(19) PRIMARY KEY, " +
		c.Type + " VARCHAR2(255 CHAR), " +
		c.Payload + " BLOB, " +
		c.Status + " VARCHAR2(32 CHAR) NOT NULL, " +
		c.DueAt + " TIMESTAMP(3) NOT NULL, " +
		c.Priority + " NUMBER(19) DEFAULT 0 NOT NULL, " +
		c.Retries + " NUMBER(10) DEFAULT 0 NOT NULL, " +
		c.MaxRetries + " NUMBER(10) DEFAULT 3 NOT NULL, " +
		c.Owner + " VARCHAR2(255 CHAR), " +
		c.ClaimedUntil + " TIMESTAMP(3), " +
		c.Version + " NUMBER(19) DEFAULT 0 NOT NULL, " +
		c.UpdatedAt + " TIMESTAMP(3) NOT NULL)"
	sequence := "CREATE SEQUENCE " + seq
	trigger := "CREATE OR REPLACE TRIGGER " + t.Name + "_bi BEFORE INSERT ON " + t.Name + " FOR EACH ROW WHEN (new." + c.ID + " IS NULL) " +
		"BEGIN SELECT " + seq + ".NEXTVAL INTO :new." + c.ID + " FROM dual; END;"
	index := "CREATE INDEX " + t.Name + "_cidx ON " + t.Name + " (" + c.Status + ", " + c.Priority + " DESC, " + c.DueAt + ")"
	return []string{ignoreNameInUse(table), ignoreNameInUse(sequence), ignoreNameInUse(trigger), ignoreNameInUse(index)}
}

// Drop drops the task table (its trigger and index go with it) past the
// recycle bin, then its id sequence, which a table of an older layout
// may lack (ORA-02289 is ignored).
func (ClaimBuilder) Drop(t claimtable.Table) []string {
	return []string{
		"DROP TABLE " + t.Name + " PURGE",
		oralike.Ignoring("DROP SEQUENCE "+claimSequence(t), oraNoSuchSequence),
	}
}

// claimSequence names the id sequence of t, in t's schema.
func claimSequence(t claimtable.Table) string { return t.Name + "_seq" }

// ignoreNameInUse wraps a quote-free DDL statement in a block that
// ignores ORA-00955.
func ignoreNameInUse(ddl string) string { return oralike.Ignoring(ddl, oraNameInUse) }

// IsExists is false: the blocks ignore ORA-00955.
func (ClaimBuilder) IsExists(error) bool { return false }

// IsMissingTable reports ORA-00942.
func (ClaimBuilder) IsMissingTable(err error) bool { return oraCode(err) == oraNoSuchTable }

var _ claimtable.Finisher = ClaimBuilder{}

// FinishRows is 500 rows per finish statement: each outcome's
// IN list stays below Oracle's 1,000 expressions (ORA-01795).
func (ClaimBuilder) FinishRows() int { return 500 }

// FinishSQL is the batch finish as a short transaction, not one statement:
// Oracle's UPDATE … RETURNING hands the changed rows only to PL/SQL
// variables (RETURNING BULK COLLECT INTO), never to the client as rows,
// and an OUT bind of a collection through database/sql and go-ora is not
// proved here without a server, so the rows changed are learnt by locking
// them first.
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
