// Package all registers every backend of this module; import it for its
// side effects:
//
//	import _ "github.com/schedlock/schedlock/dialects/all"
//
// The schedlock command imports it. Packages lock and claim import no
// backend: a program that uses them imports the backends it opens
// (dialects/postgres, dialects/redis, …), or this package for every one.
// The table of known backends that names the import a DSN of an unlinked
// backend needs (internal/dsn) is checked against this package's imports.
//
// Each backend can be left out with a build tag, goose-style: -tags
// no_postgres, no_mysql, no_sqlite, no_oracle, no_sqlserver, no_dameng,
// no_redis, no_etcd, no_zookeeper, no_nats, no_dynamodb or no_memory.
// (The schedlock command keeps SQLite regardless: selfcheck without a DSN
// runs on an embedded SQLite file.)
package all
