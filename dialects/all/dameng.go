//go:build !no_dameng

package all

import _ "github.com/schedlock/schedlock/dialects/dameng" // registers the dameng dialect (its driver only with -tags dameng)
