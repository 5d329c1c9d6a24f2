//go:build !no_mongodb

package all

import _ "github.com/schedlock/schedlock/dialects/mongodb" // registers the MongoDB backend
