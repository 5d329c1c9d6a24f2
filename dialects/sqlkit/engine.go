package sqlkit

import (
	"context"

	"github.com/schedlock/schedlock/dialects"
)

// Engine is a SQL backend's own part: its type embeds *DB, passes itself
// to New, and builds on the pool what only it knows, from the facts its
// detection proved (fields of that type). The kit's DB calls it for the
// lease table, the recommendation, and through the optional interfaces
// below for session locks, their administration and the dialect's probe.
type Engine interface {
	// NewTableLocker returns the lease-table locker for t (t.Schema()
	// already checked).
	NewTableLocker(t dialects.Table) (dialects.TableLocker, error)
	// RecommendStrategy picks the lock strategy for this database and
	// says why (DB.Recommend).
	RecommendStrategy() (dialects.Strategy, string)
}

// SessionEngine is implemented by engines with session locks.
type SessionEngine interface {
	// NewSessionLocker returns the session-strategy locker naming its
	// locks as n asks (checked with the Dialect's CheckSessionNames), or
	// an error matching ErrUnsupported that says why this database has
	// none.
	NewSessionLocker(n dialects.SessionNames) (dialects.Locker, error)
}

// AdminEngine is implemented by engines that can list lock tables and the
// server's session locks, find a holder and end its session.
type AdminEngine interface {
	// NewLockAdmin returns the administration naming session locks as n
	// asks.
	NewLockAdmin(n dialects.SessionNames) dialects.LockAdmin
}

// ProbeEngine is implemented by engines with a probe of their own. It
// fills every capability but SessionLocks and Recommended (DB.Probe adds
// them), measuring the clock with MeasureClock; it may set
// Recommended.LockStrategy when it proved fresher facts than detection.
type ProbeEngine interface {
	ProbeDialect(ctx context.Context, opts dialects.ProbeOptions) (dialects.Capabilities, error)
}
