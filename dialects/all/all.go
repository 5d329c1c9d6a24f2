// Package all registers every dialect of this build; import it for its
// side effects:
//
//	import _ "github.com/schedlock/schedlock/dialects/all"
//
// Each dialect can be left out with a build tag, goose-style: -tags
// no_postgres, no_mysql, no_sqlite, no_oracle, no_sqlserver, no_dameng, no_redis, no_etcd or no_zookeeper. (The schedlock
// command keeps SQLite regardless: selfcheck without a DSN runs on an
// embedded SQLite file.)
package all
