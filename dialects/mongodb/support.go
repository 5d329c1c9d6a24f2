package mongodb

import "github.com/schedlock/schedlock/dialects"

// supportRows are this backend's rows of the support table.
var supportRows = []dialects.ProductSupport{
	{
		Dialect:        Name,
		Product:        Product,
		Name:           "MongoDB (`mongodb://host:27017/DB`, `mongodb+srv://`)",
		Versions:       "the MongoDB wire protocol of 4.0 and later; tested on FerretDB 1.24.2",
		Session:        dialects.Feature{Status: dialects.FeatureNo, Detail: "no session locks: its locks are lease documents"},
		Table:          dialects.Feature{Status: dialects.FeatureYes, Detail: "a document per lock, one conditional findOneAndUpdate or updateOne per operation; the token is a counter incremented by every acquire; ShedLock's MongoLockProvider layout as the shedlock preset"},
		Recommended:    dialects.StrategyTable,
		Claim:          dialects.ClaimOptimistic,
		ClaimNote:      "no rows to claim",
		Listing:        dialects.Feature{Status: dialects.FeatureYes, Detail: "one find per collection"},
		Kill:           dialects.Feature{Status: dialects.FeatureNo, Detail: "no sessions to end"},
		Privileges:     []string{"readWrite on the lock database (find, update, listCollections; createCollection to create the collection, drop to remove it)"},
		Verified:       dialects.VerifiedLive,
		VerifiedDetail: "the conformance suite and the ShedLock race run on FerretDB 1.24.2 over SQLite in every test run, not on MongoDB itself",
		Notes:          []string{"lease ends are computed from the server's clock as estimated from hello's localTime (to within half a round trip)", "lock writes use write concern majority unless the DSN sets w"},
	},
}
