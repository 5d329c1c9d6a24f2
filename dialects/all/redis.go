//go:build !no_redis

package all

import _ "github.com/schedlock/schedlock/dialects/redis" // registers the Redis backend
