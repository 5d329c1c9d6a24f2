package dameng

import "fmt"

// DBMS_LOCK.REQUEST and RELEASE return codes. DM's package is documented as
// Oracle-compatible; these are Oracle's codes, which the simulator and
// the live suite hold DM to [U: not yet proven on a live DM8 server].
const (
	LockSuccess      = 0 // REQUEST granted / RELEASE done
	LockTimeout      = 1 // REQUEST: held by another session past the timeout
	LockDeadlock     = 2 // REQUEST: deadlock detected
	LockParameterErr = 3 // parameter error
	LockAlreadyOwned = 4 // REQUEST: this session already owns it; RELEASE: it does not own it
	LockIllegalLock  = 5 // illegal lock handle
)

// DBMSLockError is a DBMS_LOCK return code that is an error: 2 deadlock,
// 3 parameter error, 5 illegal lock handle, or an undocumented code.
type DBMSLockError struct {
	Call string // "REQUEST" or "RELEASE"
	Code int64
}

func (e *DBMSLockError) Error() string {
	what := "undocumented return code"
	switch e.Code {
	case LockDeadlock:
		what = "deadlock"
	case LockParameterErr:
		what = "parameter error"
	case LockIllegalLock:
		what = "illegal lock handle"
	}
	return fmt.Sprintf("DBMS_LOCK.%s returned %d (%s)", e.Call, e.Code, what)
}

// RequestResult maps the answer of a REQUEST with timeout 0: 0 (granted)
// and 4 (this session already owns it) are true; 1 (timeout: another
// session holds it) is false; 2, 3, 5 and anything else are a
// *DBMSLockError.
func RequestResult(rc int64) (bool, error) {
	switch rc {
	case LockSuccess, LockAlreadyOwned:
		return true, nil
	case LockTimeout:
		return false, nil
	default:
		return false, &DBMSLockError{Call: "REQUEST", Code: rc}
	}
}

// ReleaseResult maps the answer of a RELEASE: 0 is true (released); 4 is
// false (this session does not own the lock, which stays as it is); 3, 5
// and anything else are a *DBMSLockError.
func ReleaseResult(rc int64) (bool, error) {
	switch rc {
	case LockSuccess:
		return true, nil
	case LockAlreadyOwned:
		return false, nil
	default:
		return false, &DBMSLockError{Call: "RELEASE", Code: rc}
	}
}

// HoldsResult maps the REQUEST answer of the Holds block: 4 (already own)
// is true; 0 (the session did not hold it, and the block gave back what
// it just took) and 1 (another session holds it) are false; 2, 3, 5 and
// anything else are a *DBMSLockError.
//
// Should DM answer a second REQUEST of an owned lock with 0 instead of 4
// (as IvorySQL's emulation did, taking the lock a second time), Holds
// reports false and the block gives one acquisition back: the lease is
// then reported lost at once and its connection dropped, which frees the
// rest, never kept while another session could take the lock.
func HoldsResult(rc int64) (bool, error) {
	switch rc {
	case LockAlreadyOwned:
		return true, nil
	case LockSuccess, LockTimeout:
		return false, nil
	default:
		return false, &DBMSLockError{Call: "REQUEST", Code: rc}
	}
}
