package sqlite

import "github.com/schedlock/schedlock/dialects"

// supportRows are this backend's rows of the support table (the
// Dialect's Support).
var supportRows = []dialects.ProductSupport{
	{
		Dialect:        Name,
		Product:        dialects.ProductSQLite,
		Name:           "SQLite",
		Versions:       "3.35+ (RETURNING), embedded through modernc.org/sqlite",
		Session:        dialects.Feature{Status: dialects.FeatureNo, Detail: "SQLite has no named session locks"},
		Table:          dialects.Feature{Status: dialects.FeatureYes, Detail: "`INSERT … ON CONFLICT … DO UPDATE … WHERE … RETURNING`, atomic under SQLite's database write lock; times from `strftime('%Y-%m-%d %H:%M:%f', 'now')`"},
		Recommended:    dialects.StrategyTable,
		Claim:          dialects.ClaimOptimistic,
		ClaimNote:      "no row locks: claim with `UPDATE … WHERE version = ?`",
		Listing:        dialects.Feature{Status: dialects.FeatureNo, Detail: "no session locks; `locks ls` lists the lease table"},
		Kill:           dialects.Feature{Status: dialects.FeatureNo, Detail: "no sessions to end; " + string(dialects.TermForceRelease) + " ends a lease in the table"},
		Privileges:     []string{"write access to the database file and its directory (for the journal)"},
		Verified:       dialects.VerifiedLive,
		VerifiedDetail: "the conformance suite runs on a real database file in every test run (no server needed)",
		Notes:          []string{"processes share one file; busy waits are handled by the DSN's busy timeout, see `sqlite.DSN`"},
	},
}
