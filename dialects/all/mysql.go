//go:build !no_mysql

package all

import _ "github.com/schedlock/schedlock/dialects/mysql" // registers the mysql dialect
