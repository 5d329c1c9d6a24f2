//go:build !no_postgres

package all

import _ "github.com/schedlock/schedlock/dialects/postgres" // registers the postgres dialect
