package claimtable

import (
	"database/sql"

	"github.com/schedlock/schedlock/dialects"
)

// Kind is the Go type bound to a placeholder, for dialects that cast
// their parameters (PostgreSQL).
type Kind int

// The kinds of bound values.
const (
	KindInt   Kind = iota // int64
	KindText              // string
	KindBytes             // []byte
)

// Select is one SELECT the engine needs, in parts a Builder assembles.
type Select struct {
	Columns []string // expressions of the select list
	Table   string
	Where   string // "" for none
	OrderBy string // "" for none
	// Limit is the placeholder bound to the row count, "" for no limit.
	Limit string
	// Lock locks the rows for update, skipping rows other transactions
	// hold (FOR UPDATE SKIP LOCKED, WITH (UPDLOCK, READPAST, ROWLOCK)).
	Lock bool
}

// SingleClaim is the parts of a one-statement claim: lock up to Limit
// rows of Table matching Where in Order, set them with Set, return
// Returning(prefix): the claim's columns, each qualified by prefix ("t.",
// "inserted.", or "" unqualified).
type SingleClaim struct {
	Table     string
	ID        string // the id column
	Where     string
	OrderBy   string
	Limit     string
	Set       []string // "col = expr"
	Returning func(prefix string) []string
}

// Builder is one dialect's SQL vocabulary for task-row claims. Every time
// it renders is UTC on the database clock with millisecond precision.
type Builder interface {
	// Dialect is the registry name used in errors ("postgres", …).
	Dialect() string
	// Param is the placeholder for the i-th bound value (from 1) of kind k.
	// The engine binds one value per placeholder, in the order they appear
	// in the text, so positional ("?") and numbered ($1, @p1, :1, ?1)
	// styles both work.
	Param(i int, k Kind) string
	// Now is the database clock, UTC, millisecond precision.
	Now() string
	// PlusMs is the timestamp ts plus the milliseconds bound at param.
	PlusMs(ts, param string) string
	// EpochMs reads the timestamp ts as integer milliseconds since the
	// Unix epoch. It may repeat ts, so the engine never puts a placeholder
	// in it.
	EpochMs(ts string) string
	// Select assembles s.
	Select(s Select) string
	// LimitsLocked reports whether a locking Select may have a row limit;
	// where it may not (Oracle: ORA-02014; a ROWNUM filter would run before
	// SKIP LOCKED and hand the second worker nothing), the engine locks
	// without one and reads only the rows it asked for.
	LimitsLocked() bool
	// Single returns the one-statement claim for strategy, or ok false
	// when the dialect claims with strategy in a short transaction.
	Single(strategy dialects.ClaimStrategy, c SingleClaim) (string, bool)
	// Strategies are the claim strategies the dialect can run.
	Strategies() []dialects.ClaimStrategy
	// TxOptions are the options of the claim transaction (the lock-then-
	// update claims): MySQL and MariaDB claim under READ COMMITTED.
	TxOptions() *sql.TxOptions
	// MaxParams is the most placeholders one statement may have (SQL
	// Server 2,100; Oracle 1,000 expressions in an IN list); the engine
	// splits id lists into statements below it.
	MaxParams() int
	// MultiRowInsert reports whether INSERT … VALUES (…), (…) works.
	MultiRowInsert() bool
	// Create is the DDL of the default task table and its index, run in
	// order; each statement tolerates an existing object where the
	// database allows (IF NOT EXISTS), else IsExists says so.
	Create(t Table) []string
	// IsExists reports whether err says a CREATE found its object already
	// there.
	IsExists(err error) bool
	// IsMissingTable reports whether err says the table does not exist.
	IsMissingTable(err error) bool
}

// Dropper is implemented by Builders whose default task table brings
// objects of its own that DROP TABLE leaves behind (Oracle's id
// sequence): Drop returns the statements that remove the table and them,
// run in order.
type Dropper interface {
	Drop(t Table) []string
}

// ErrorMapper is implemented by Builders that explain a server error in
// the database's own terms (SQL Server's READPAST refusal outside READ
// COMMITTED); it returns err unchanged when it knows nothing better.
type ErrorMapper interface {
	MapError(err error) error
}

// Claimant is implemented by SQL backends with task-row claims: the
// Builder of the statements for the database they opened.
type Claimant interface {
	ClaimBuilder() Builder
}

// BuilderOf returns the claim Builder of backend, or false when it has no
// task-row claims.
func BuilderOf(backend dialects.Backend) (Builder, bool) {
	if c, ok := backend.(Claimant); ok {
		return c.ClaimBuilder(), true
	}
	return nil, false
}
