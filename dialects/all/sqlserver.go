//go:build !no_sqlserver

package all

import _ "github.com/schedlock/schedlock/dialects/sqlserver" // registers the sqlserver dialect
