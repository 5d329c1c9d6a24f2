package sqlserver

import (
	"errors"
	"fmt"
)

// Server error numbers this package reacts to.
const (
	errInvalidObjectName = 208  // "Invalid object name '%.*ls'."
	errPermissionDenied  = 297  // "The user does not have permission to perform this action."
	errViewStateDenied   = 300  // "VIEW SERVER STATE permission was denied on object 'server', database 'master'."
	errDeadlockVictim    = 1205 // "Transaction (Process ID %d) was deadlocked … chosen as the deadlock victim."
	errLockTimeout       = 1222 // "Lock request time out period exceeded."
	errAppLockNotHeld    = 1223 // "Cannot release the application lock (…) because it is not currently held."
	errDuplicateIndexKey = 2601 // "Cannot insert duplicate key row in object '%.*ls' with unique index '%.*ls'."
	errDuplicateKey      = 2627 // "Violation of %ls constraint '%.*ls'. Cannot insert duplicate key in object '%.*ls'."
	errKillDenied        = 6102 // "User does not have permission to use the KILL statement."
	errKillOwnSession    = 6104 // "Cannot use KILL to kill your own process."
	errNoSuchSession     = 6106 // "Process ID %d is not an active process ID."
	errKillSystemSession = 6107 // "Only user processes can be killed."
)

// serverError is what go-mssqldb's mssql.Error (a value type) exposes;
// matching the interface finds it by value or by pointer.
type serverError interface {
	SQLErrorNumber() int32
	SQLErrorMessage() string
}

// errNumber returns the SQL Server error number inside err, or 0.
func errNumber(err error) int32 {
	var se serverError
	if errors.As(err, &se) {
		return se.SQLErrorNumber()
	}
	return 0
}

// hasNumber reports whether err carries one of the server error numbers.
func hasNumber(err error, numbers ...int32) bool {
	n := errNumber(err)
	if n == 0 {
		return false
	}
	for _, want := range numbers {
		if n == want {
			return true
		}
	}
	return false
}

// Failures sp_getapplock and sp_releaseapplock report through their return
// code. An *AppLockError matches exactly one of them with errors.Is.
var (
	// ErrLockCanceled: return code -2, the lock request was canceled.
	ErrLockCanceled = errors.New("lock request canceled")
	// ErrDeadlockVictim: return code -3, the lock request was chosen as a
	// deadlock victim (the transaction is not rolled back).
	ErrDeadlockVictim = errors.New("lock request chosen as deadlock victim")
	// ErrLockCall: return code -999, a parameter validation or other call
	// error (for example a principal the caller is not a member of).
	ErrLockCall = errors.New("lock call error")
	// ErrUnknownReturnCode: a negative return code the documentation does
	// not list.
	ErrUnknownReturnCode = errors.New("undocumented return code")
)

// AppLockError is a failure return code of sp_getapplock or
// sp_releaseapplock.
type AppLockError struct {
	Proc     string // "sp_getapplock" or "sp_releaseapplock"
	Code     int    // the procedure's return code
	Resource string // the @Resource it was called with
}

func (e *AppLockError) Error() string {
	return fmt.Sprintf("%s returned %d for resource %q: %v", e.Proc, e.Code, e.Resource, e.kind())
}

// Is matches the sentinel of the return code.
func (e *AppLockError) Is(target error) bool { return target == e.kind() }

func (e *AppLockError) kind() error {
	switch e.Code {
	case -2:
		return ErrLockCanceled
	case -3:
		return ErrDeadlockVictim
	case -999:
		return ErrLockCall
	default:
		return ErrUnknownReturnCode
	}
}
