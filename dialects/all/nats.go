//go:build !no_nats

package all

import _ "github.com/schedlock/schedlock/dialects/nats" // registers the NATS JetStream KV backend
