package dsn

// The DSN layer learns every database from the registry: its tests run
// with every backend of the build registered.
import _ "github.com/schedlock/schedlock/dialects/all"
