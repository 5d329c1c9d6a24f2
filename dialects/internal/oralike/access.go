package oralike

import (
	"context"
	"fmt"

	"github.com/schedlock/schedlock/dialects"
)

// LockAccess is what detection proved about the session's use of
// SYS.DBMS_LOCK: whether the probe gave an answer and whether DBMS_LOCK may
// be called (Oracle: EXECUTE is granted; Dameng: the system package is
// installed and visible). A backend keeps it as a field, so it belongs to
// the one database its New detected. The zero value is an unknown answer.
type LockAccess struct {
	// Known is true when the probe gave a definite answer.
	Known bool
	// Usable is true when the session may call SYS.DBMS_LOCK.
	Usable bool
	// User is the session user, for a GRANT; "" when not read.
	User string
	// Err is the probe's error when DBMS_LOCK is not usable or the answer
	// is unknown.
	Err error
}

// ProbeLockAccess runs probe, which asks the server whether user's session
// may call DBMS_LOCK, and turns its outcome into a LockAccess: no error is
// a definite answer (usable as probe says); an error that refused reports
// (nil: none does) is a definite "not usable" keeping the error; any other
// error leaves the answer unknown. Only a context that ended is an error,
// "probe DBMS_LOCK: " and the context's error.
func ProbeLockAccess(ctx context.Context, user string, probe func(context.Context) (usable bool, err error), refused func(error) bool) (LockAccess, error) {
	usable, err := probe(ctx)
	switch {
	case err == nil:
		return LockAccess{Known: true, Usable: usable, User: user}, nil
	case refused != nil && refused(err):
		return LockAccess{Known: true, User: user, Err: err}, nil
	case ctx.Err() != nil:
		return LockAccess{}, fmt.Errorf("probe DBMS_LOCK: %w", ctx.Err())
	default:
		return LockAccess{User: user, Err: err}, nil
	}
}

// Recommend picks the session strategy when a proved DBMS_LOCK usable and
// the lease table otherwise, with the reason that fits a: usable when it
// is usable, missing when the probe proved it is not, unproven when the
// answer is unknown.
func (a LockAccess) Recommend(usable, missing, unproven string) (dialects.Strategy, string) {
	switch {
	case a.Known && a.Usable:
		return dialects.StrategySession, usable
	case a.Known:
		return dialects.StrategyTable, missing
	default:
		return dialects.StrategyTable, unproven
	}
}
