package cronlock_test

// The tests open DSNs of every backend, so they link every one, as the
// schedlock command does; a program links only the backends it imports.
import _ "github.com/schedlock/schedlock/dialects/all"
