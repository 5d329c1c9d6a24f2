package postgres

import (
	"strings"

	"github.com/schedlock/schedlock/dialects"
)

// yugabyteAdvisoryGA is the first YugabyteDB release whose advisory locks
// are generally available and on by default; earlier builds refuse them or
// (2.25 preview) let two sessions hold the same key.
var yugabyteAdvisoryGA = []int{2025, 1}

// recommend is Backend.RecommendStrategy for the product in info, of
// which detection proved facts (nil: nothing).
func recommend(info dialects.Info, facts *serverFacts) (dialects.Strategy, string) {
	switch info.Product {
	case dialects.ProductPostgreSQL:
		why := "PostgreSQL advisory locks are real server locks, freed when the holder's connection ends, so a crashed node leaves no zombie lock; " +
			"do not use them behind PgBouncer in transaction pooling mode (the lock lands on a random server connection): use " + string(dialects.TermStrategyTable) + " there"
		if info.Variant == VariantAurora {
			why += "; on Aurora connect through the cluster (writer) endpoint: a reader instance's advisory locks are its own, so nodes on different readers would all get the lock, " +
				"and a failover drops the connection, which ends the lock (the holder is told)"
		}
		return dialects.StrategySession, why
	case dialects.ProductCockroachDB:
		return dialects.StrategyTable, "CockroachDB's pg_try_advisory_lock is a stub that always answers true, so it locks nothing; the lease table is a real lock " +
			"(its statements are sent again on SQLSTATE 40001, CockroachDB's \"restart transaction\")"
	case dialects.ProductYugabyteDB:
		if versionAtLeast(info.Version, yugabyteAdvisoryGA...) {
			return dialects.StrategySession, "YugabyteDB 2025.1+ has generally available advisory locks, freed when the holder's connection ends"
		}
		return dialects.StrategyTable, "YugabyteDB before 2025.1 has no working advisory locks (refused, or two sessions may hold one key); the lease table is a real lock"
	case dialects.ProductKingbase, dialects.ProductOpenGauss:
		return recommendProven(info, facts)
	default:
		return dialects.StrategyTable, "unrecognised PostgreSQL-wire product; the lease table works on every PostgreSQL-family database"
	}
}

// recommendProven recommends for a product whose advisory locks are used
// only when detection proved them.
func recommendProven(info dialects.Info, facts *serverFacts) (dialects.Strategy, string) {
	name := productName(info)
	switch {
	case facts == nil:
		return dialects.StrategyTable, "advisory locks on " + name + " were not proven by detection; the lease table works on every PostgreSQL-family database"
	case facts.catalog.errMissing() != nil:
		return dialects.StrategyTable, name + ": " + facts.catalog.errMissing().Error() + "; the lease table is a real lock"
	case !facts.proven():
		return dialects.StrategyTable, name + " advisory locks did not pass the two-connection probe at detection (" + string(facts.advisory.Status) + ": " +
			strings.TrimPrefix(facts.advisory.Detail, "proved: ") + "); the lease table is a real lock"
	}
	return dialects.StrategySession, name + " advisory locks (" + facts.catalog.TryLock + ") passed the two-connection probe at detection: " +
		"a second session was refused the lock and got it once released; they are freed when the holder's connection ends"
}
