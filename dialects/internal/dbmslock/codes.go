// Package dbmslock maps the return codes of the Oracle-compatible
// DBMS_LOCK package (REQUEST, RELEASE), shared by the dialects whose
// databases have it: Oracle, and Dameng when its system package is
// installed.
package dbmslock

import "fmt"

// DBMS_LOCK.REQUEST and RELEASE return codes.
const (
	LockSuccess      = 0 // REQUEST granted / RELEASE done
	LockTimeout      = 1 // REQUEST: held by another session past the timeout
	LockDeadlock     = 2 // REQUEST: deadlock detected
	LockParameterErr = 3 // parameter error
	LockAlreadyOwned = 4 // REQUEST: this session already owns it; RELEASE: it does not own it
	LockIllegalLock  = 5 // illegal lock handle
)

// Error is a DBMS_LOCK return code that is an error: 2 deadlock,
// 3 parameter error, 5 illegal lock handle, or a code the package does not
// document.
type Error struct {
	Call string // "REQUEST" or "RELEASE"
	Code int64
}

func (e *Error) Error() string {
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
// is true; 4 (already owned by this session) is true as well, because the
// session does hold the lock (sqlkit.SessionLocker keys its locks by the
// DBMS_LOCK name, so it never asks a lock connection for a lock one of
// its leases holds there: a 4 means an earlier user of that pooled
// connection left the lock behind, and the new lease then owns and frees
// it); 1 (timeout) is false: another session holds it; 2, 3, 5 and
// anything else are a *Error.
func RequestResult(rc int64) (bool, error) {
	switch rc {
	case LockSuccess, LockAlreadyOwned:
		return true, nil
	case LockTimeout:
		return false, nil
	default:
		return false, &Error{Call: "REQUEST", Code: rc}
	}
}

// ReleaseResult maps the answer of a RELEASE: 0 is true (released); 4 is
// false (this session does not own the lock, which stays as it is); 3, 5
// and anything else are a *Error.
func ReleaseResult(rc int64) (bool, error) {
	switch rc {
	case LockSuccess:
		return true, nil
	case LockAlreadyOwned:
		return false, nil
	default:
		return false, &Error{Call: "RELEASE", Code: rc}
	}
}

// HoldsResult maps the REQUEST answer of the Holds block: 4 (already own)
// is true; 0 (the session did not hold it and the block gave back what it
// just took) and 1 (another session holds it) are false; 2, 3, 5 and
// anything else are a *Error.
//
// Should a server answer a second REQUEST of an owned lock with 0 instead
// of 4 (as IvorySQL's emulation did, taking the lock a second time), Holds
// reports false and the block gives one acquisition back: the lease is then
// reported lost at once and its connection dropped, which frees the rest —
// never kept while another session could take the lock.
func HoldsResult(rc int64) (bool, error) {
	switch rc {
	case LockAlreadyOwned:
		return true, nil
	case LockSuccess, LockTimeout:
		return false, nil
	default:
		return false, &Error{Call: "REQUEST", Code: rc}
	}
}
