package oralike

import (
	"database/sql"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/claimtable"
)

// ClaimRules are the parts of a claimtable.Builder that Oracle and Dameng
// share; each dialect's ClaimBuilder embeds it and writes the rest (its
// placeholders, clock, DDL and errors). A claim is a short transaction:
// Oracle refuses a row limit beside FOR UPDATE (ORA-02014) and a ROWNUM
// filter runs before SKIP LOCKED, so a skip-locked claim opens SELECT …
// FOR UPDATE SKIP LOCKED without a limit, reads only the rows it wants,
// updates them by id and commits; unlocked reads are limited with ROWNUM.
type ClaimRules struct{}

// Select is claimtable.RowNumSelect.
func (ClaimRules) Select(s claimtable.Select) string { return claimtable.RowNumSelect(s) }

// LimitsLocked is false (ORA-02014; not verified on Dameng, so not used).
func (ClaimRules) LimitsLocked() bool { return false }

// Single is never: these databases claim in a transaction.
func (ClaimRules) Single(dialects.ClaimStrategy, claimtable.SingleClaim) (string, bool) {
	return "", false
}

// Strategies are skip-locked and optimistic.
func (ClaimRules) Strategies() []dialects.ClaimStrategy {
	return []dialects.ClaimStrategy{dialects.ClaimSkipLocked, dialects.ClaimOptimistic}
}

// TxOptions is the default (READ COMMITTED).
func (ClaimRules) TxOptions() *sql.TxOptions { return nil }

// MaxParams is 1,000: the most expressions of an Oracle IN list
// (ORA-01795), kept on Dameng, whose own limit is not verified here.
func (ClaimRules) MaxParams() int { return 1000 }

// MultiRowInsert is false: no VALUES (…), (…) before Oracle 23ai, and not
// verified on DM8.
func (ClaimRules) MultiRowInsert() bool { return false }
