// Package locktable is the portable lease-table engine behind the table
// strategy. It is parametrised by each dialect's SQL (a Builder): one
// statement per acquire, refresh and release, all lease arithmetic on the
// database clock, a fencing token that grows on every acquire.
package locktable

import "github.com/schedlock/schedlock/dialects"

// Arg names a value the engine binds to a statement parameter.
type Arg int

const (
	// ArgName is the stored lock name (after MapName).
	ArgName Arg = iota
	// ArgOwner is the holder identity (string).
	ArgOwner
	// ArgToken is the fencing token (int64); 0 means "do not compare the
	// token", so builders write (token = ? OR ? = 0).
	ArgToken
	// ArgAtMostMs is the lease length in milliseconds (int64).
	ArgAtMostMs
	// ArgAtLeastMs is the at-least hold in milliseconds (int64).
	ArgAtLeastMs

	// The arguments of a batch statement (BatchRefresher), each binding
	// the whole batch of leases, in batch order.

	// ArgNameArray is the stored names as one []string (PostgreSQL text[]).
	ArgNameArray
	// ArgTokenArray is the tokens as one []int64 (PostgreSQL bigint[]).
	ArgTokenArray
	// ArgNameList is one placeholder per lease: its stored name (an IN list).
	ArgNameList
	// ArgNameTokenList is two placeholders per lease: its stored name and
	// its token (a list of row constructors).
	ArgNameTokenList
	// ArgNameTokenJSON is one JSON text, [[name, token], …] (SQLite's
	// json_each).
	ArgNameTokenJSON
)

// Result says how the engine reads a statement's outcome.
type Result int

const (
	// ResultRow: the statement returns one row holding the token (or 1
	// when the schema has no token column) on success, no row on failure.
	// PostgreSQL and SQLite use RETURNING.
	ResultRow Result = iota
	// ResultInsertID: success when LastInsertId() >= 1, and that value is
	// the token. MySQL sets it with LAST_INSERT_ID(expr), which works
	// whatever the connection's CLIENT_FOUND_ROWS setting.
	ResultInsertID
	// ResultRowsAffected: success when RowsAffected() >= 1; the token, if
	// any, is read back with Inspect.
	ResultRowsAffected
)

// Stmt is one SQL statement with the values to bind, in placeholder order.
type Stmt struct {
	SQL    string
	Args   []Arg
	Result Result
}

// BatchRefresher is optionally implemented by a Builder whose database can
// renew many leases of one owner with one statement. The engine sends it
// for two or more leases of one owner and AtMost whose tokens are known
// (or whose table has no token column); a lone lease gets Refresh.
type BatchRefresher interface {
	// RefreshBatch is Refresh for n leases of ArgOwner at once: it sets
	// until = now + ArgAtMostMs on every row whose name is one of the
	// bound names, whose token (where the schema has one) is the token
	// bound with that name, whose owner is ArgOwner and whose lease is
	// still running (until > now), each row checked on its own as Refresh
	// checks one; it sets what Refresh sets. Its Result is ResultRow (one
	// row per renewed lease holding its stored name, as the engine bound
	// it) or ResultRowsAffected (the engine then reads back the rows of a
	// batch whose count falls short, to tell which were renewed).
	RefreshBatch(s dialects.Schema, n int) Stmt
	// MaxBatch is the most leases one RefreshBatch statement takes; 0 or
	// less turns batching off (one Refresh per lease).
	MaxBatch() int
}

// Builder writes one dialect's lease-table SQL for a schema. Every
// statement runs alone in autocommit mode and compares against the
// database's clock (clock_timestamp(), UTC_TIMESTAMP(3), …), stored as UTC
// without a time zone, or with a writer time zone (Schema.TimeZone) as that
// zone's wall-clock time, converted with a Zone.
type Builder interface {
	// Dialect is the registry name used in errors ("postgres", …).
	Dialect() string
	// MaxNameRunes is the longest name the name column of s stores as
	// Create declares it. On the native table longer names are stored as
	// dialects.MapName(name, MaxNameRunes(s)). The presets that mirror
	// other tools' tables (shedlock: 64, sys_sched_lock: 128) store names
	// as they are, up to the width the catalog gives for the existing
	// table (NameColumnBuilder), and refuse longer ones.
	MaxNameRunes(s dialects.Schema) int
	// Acquire inserts the row of a new name, or takes over a row whose lease
	// has expired (until <= now): owner = ArgOwner, locked_at = now,
	// until = now + ArgAtMostMs, token = token + 1 (1 for a new row). A live
	// row is left untouched and the statement reports failure.
	Acquire(s dialects.Schema) Stmt
	// Refresh sets until = now + ArgAtMostMs where name, owner and token
	// match and until > now.
	Refresh(s dialects.Schema) Stmt
	// Release sets until = max(locked_at + ArgAtLeastMs, now) where name,
	// owner and token match and until > now. (On a table whose release
	// deletes the row, a RowDeleter's, it keeps the row of an early
	// release.)
	Release(s dialects.Schema) Stmt
	// Expire sets until = now where name matches and until > now, whoever
	// the owner is (administrative force-unlock). ResultRowsAffected-style.
	Expire(s dialects.Schema) Stmt
	// Inspect selects owner, token (0 without a token column), locked_at,
	// until and now for ArgName; times as integer milliseconds since the
	// Unix epoch (UTC).
	Inspect(s dialects.Schema) Stmt
	// List selects name, owner, token, locked_at, until and now, as Inspect
	// does, for every row, ordered by name.
	List(s dialects.Schema) Stmt
	// Create is CREATE TABLE IF NOT EXISTS for s (name as primary key).
	Create(s dialects.Schema) string
	// IsMissingTable reports whether err says the table does not exist.
	IsMissingTable(err error) bool
}
