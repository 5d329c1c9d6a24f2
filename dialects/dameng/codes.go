package dameng

import "github.com/schedlock/schedlock/dialects/internal/dbmslock"

// DBMS_LOCK.REQUEST and RELEASE return codes (see package dbmslock).
const (
	LockSuccess      = dbmslock.LockSuccess
	LockTimeout      = dbmslock.LockTimeout
	LockDeadlock     = dbmslock.LockDeadlock
	LockParameterErr = dbmslock.LockParameterErr
	LockAlreadyOwned = dbmslock.LockAlreadyOwned
	LockIllegalLock  = dbmslock.LockIllegalLock
)

// DBMSLockError is a DBMS_LOCK return code that is an error: 2 deadlock,
// 3 parameter error, 5 illegal lock handle, or an undocumented code.
type DBMSLockError = dbmslock.Error

// RequestResult, ReleaseResult, HoldsResult and WaitResult map DBMS_LOCK answers; see
// package dbmslock for the mapping of every code.
var (
	RequestResult = dbmslock.RequestResult
	ReleaseResult = dbmslock.ReleaseResult
	HoldsResult   = dbmslock.HoldsResult
	WaitResult    = dbmslock.WaitResult
)
