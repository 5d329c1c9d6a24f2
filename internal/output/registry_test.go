package output

// Product names come from the registry: the tests run with every backend of
// the build registered.
import _ "github.com/schedlock/schedlock/dialects/all"
