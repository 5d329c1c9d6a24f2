package postgres

import (
	"github.com/schedlock/schedlock/dialects"
)

// yugabyteAdvisoryGA is the first YugabyteDB release whose advisory locks
// are generally available and on by default; earlier builds refuse them or
// (2.25 preview) let two sessions hold the same key.
var yugabyteAdvisoryGA = []int{2025, 1}

// Recommend picks the lock strategy for the product in info and says why:
// session (advisory locks) on PostgreSQL and on YugabyteDB 2025.1 or later,
// the lease table everywhere else.
func Recommend(info dialects.Info) (dialects.Strategy, string) {
	switch info.Product {
	case dialects.ProductPostgreSQL:
		return dialects.StrategySession, "PostgreSQL advisory locks are real server locks, freed when the holder's connection ends, so a crashed node leaves no zombie lock; " +
			"do not use them behind PgBouncer in transaction pooling mode (the lock lands on a random server connection): use --strategy table there"
	case dialects.ProductCockroachDB:
		return dialects.StrategyTable, "CockroachDB's pg_try_advisory_lock is a stub that always answers true, so it locks nothing; the lease table is a real lock"
	case dialects.ProductYugabyteDB:
		if versionAtLeast(info.Version, yugabyteAdvisoryGA...) {
			return dialects.StrategySession, "YugabyteDB 2025.1+ has generally available advisory locks, freed when the holder's connection ends"
		}
		return dialects.StrategyTable, "YugabyteDB before 2025.1 has no working advisory locks (refused, or two sessions may hold one key); the lease table is a real lock"
	case dialects.ProductKingbase, dialects.ProductOpenGauss:
		return dialects.StrategyTable, "session locks are not proven on " + info.Product + " yet; the lease table works on every PostgreSQL-family database"
	default:
		return dialects.StrategyTable, "unrecognised PostgreSQL-wire product; the lease table works on every PostgreSQL-family database"
	}
}
