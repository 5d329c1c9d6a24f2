//go:build !no_oracle

package all

import _ "github.com/schedlock/schedlock/dialects/oracle" // registers the oracle dialect
