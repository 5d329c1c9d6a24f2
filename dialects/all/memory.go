//go:build !no_memory

package all

import _ "github.com/schedlock/schedlock/dialects/memory" // registers the in-process memory backend
