package dbmslock

import (
	"math"
	"time"
)

// MaxWait is DBMS_LOCK.MAXWAIT, 32767 seconds: a REQUEST with this
// timeout waits forever.
const MaxWait = 32767

// TimeoutSeconds is wait as the timeout of a waiting REQUEST, whose
// parameter is an INTEGER number of seconds: rounded up to whole seconds,
// at least 1 (0 would not wait), at most MaxWait-1 (MaxWait would wait
// forever; a longer wait gives up after about 9 hours).
//
// Rounded up rather than sliced: a fraction passed as is would be
// rounded by PL/SQL to the nearest second (0.4 s to 0, no wait at all),
// and slicing the wait (whole seconds on the server, the rest by a last
// try) would bring polling back for the last fraction, so that a release
// landing in it is missed and a wait under a second never waits on the
// server. Rounding up keeps the hand-over immediate for the whole wait;
// its cost is that a wait for a lock that stays taken gives up less than
// a second after the asked wait, never before it (as MySQL's GET_LOCK
// with whole seconds does).
func TimeoutSeconds(wait time.Duration) int64 {
	secs := int64(math.Ceil(wait.Seconds()))
	return min(max(secs, 1), MaxWait-1)
}

// WaitResult maps the answer of a REQUEST with a timeout, run by
// sqlkit.SessionLocker on a connection that holds no other lock: 0
// (granted, at once or when the holder released it) is true; 4 (already
// owned by this session) is true as in RequestResult; 1 (the timeout ran
// out, another session still holds it) is false; 2 (deadlock), 3
// (parameter error), 5 (illegal handle) and anything else are a *Error.
func WaitResult(rc int64) (bool, error) {
	switch rc {
	case LockSuccess, LockAlreadyOwned:
		return true, nil
	case LockTimeout:
		return false, nil
	default:
		return false, &Error{Call: "REQUEST", Code: rc}
	}
}
