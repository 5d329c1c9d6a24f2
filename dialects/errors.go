package dialects

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Sentinel errors. Every error a Locker, Lease or detector returns matches at
// most one of them with errors.Is.
var (
	// ErrHeld: the lock is held by another owner (or another session).
	ErrHeld = errors.New("lock held by another owner")
	// ErrNotOwner: release or refresh by someone who does not hold the lock.
	ErrNotOwner = errors.New("not the owner of the lock")
	// ErrLeaseLost: the lease ended without Release: it expired, was taken
	// over, or its connection dropped.
	ErrLeaseLost = errors.New("lease lost")
	// ErrUnsupported: this database (or version, or mode) cannot do it.
	ErrUnsupported = errors.New("unsupported by this database")
	// ErrPrivilege: the database user lacks a privilege; see PrivilegeError.
	ErrPrivilege = errors.New("privilege missing")
	// ErrNoTable: the lock table does not exist; see MissingTableError.
	ErrNoTable = errors.New("lock table missing")
	// ErrInvalid: bad input (empty name, negative duration, unknown preset…).
	ErrInvalid = errors.New("invalid argument")
)

// Error carries the dialect and operation that failed. It unwraps to the
// cause, so errors.Is(err, ErrHeld) still works.
type Error struct {
	Dialect string // "postgres", "mysql", "sqlite", …
	Op      string // "acquire", "release", "detect", …
	Err     error
}

func (e *Error) Error() string { return e.Dialect + ": " + e.Op + ": " + e.Err.Error() }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Wrap returns err wrapped in an *Error for dialect and op, or nil for nil.
// An error that already carries a dialect is returned unchanged.
func Wrap(dialect, op string, err error) error {
	if err == nil {
		return nil
	}
	var de *Error
	if errors.As(err, &de) {
		return err
	}
	return &Error{Dialect: dialect, Op: op, Err: err}
}

// HeldError says who holds a lock that could not be acquired. It matches
// ErrHeld.
type HeldError struct {
	Name   string
	Holder string    // owner or session id; empty when unknown
	Until  time.Time // lease end (UTC); zero for session locks
}

func (e *HeldError) Error() string {
	msg := fmt.Sprintf("lock %q is held", e.Name)
	if e.Holder != "" {
		msg += " by " + e.Holder
	}
	if !e.Until.IsZero() {
		msg += " until " + e.Until.UTC().Format(time.RFC3339Nano)
	}
	return msg
}

// Is makes errors.Is(err, ErrHeld) true.
func (e *HeldError) Is(target error) bool { return target == ErrHeld }

// PrivilegeError names the privilege the database user lacks and the
// statement that grants it. It matches ErrPrivilege.
type PrivilegeError struct {
	Privilege string // e.g. "EXECUTE ON DBMS_LOCK"
	Grant     string // e.g. "GRANT EXECUTE ON SYS.DBMS_LOCK TO app"
	Err       error  // the server's error
}

func (e *PrivilegeError) Error() string {
	msg := "missing privilege " + e.Privilege
	if e.Grant != "" {
		msg += "; fix with: " + e.Grant
	}
	return msg
}

// Is makes errors.Is(err, ErrPrivilege) true.
func (e *PrivilegeError) Is(target error) bool { return target == ErrPrivilege }

// Unwrap returns the server's error.
func (e *PrivilegeError) Unwrap() error { return e.Err }

// MissingTableError says the lock table does not exist and gives the
// statement that creates it. It matches ErrNoTable.
type MissingTableError struct {
	Table     string
	CreateSQL string
}

func (e *MissingTableError) Error() string {
	// The statement on one line: the message is one line wherever it goes.
	create := strings.Join(strings.Fields(e.CreateSQL), " ")
	return fmt.Sprintf("lock table %s does not exist; create it with --create-table or run: %s", e.Table, create)
}

// Is makes errors.Is(err, ErrNoTable) true.
func (e *MissingTableError) Is(target error) bool { return target == ErrNoTable }

func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalid}, args...)...)
}

// Invalidf returns an error matching ErrInvalid with a formatted message.
func Invalidf(format string, args ...any) error { return invalidf(format, args...) }
