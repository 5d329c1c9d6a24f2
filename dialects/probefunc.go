package dialects

import (
	"context"
	"database/sql"
)

// ProbeFunc is a dialect's probe (Dialect.Probe). It fills every
// Capabilities field except Recommended (it may set
// Recommended.LockStrategy and LockReason when it learned more than
// detection did; DB.Probe then keeps them instead of Recommend's), measuring the clock with
// MeasureClock; it may leave SessionLocks zero, and DB.Probe then proves
// the session locker's SessionOps with ProbeSessionOps. A capability whose
// probe fails is StatusUnknown with the reason; the error is for failures
// that stop the whole probe (the context ended, the connection is gone).
// It must leave nothing behind and honour opts.ReadOnly.
type ProbeFunc func(ctx context.Context, db *sql.DB, info Info, opts ProbeOptions) (Capabilities, error)
