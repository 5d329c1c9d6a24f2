//go:build !no_sqlite

package all

import _ "github.com/schedlock/schedlock/dialects/sqlite" // registers the sqlite dialect
