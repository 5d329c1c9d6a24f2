package dialects

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/schedlock/schedlock/internal/elide"
)

// FormatTime writes a lease end or a lock's time as messages show it: UTC,
// to the millisecond (the precision of every store's lease arithmetic), as
// locks ls lists it, e.g. 2026-12-02T01:13:32.225Z.
func FormatTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

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
	// ErrConnLimit: the server refused a connection because one of its
	// connection limits was reached; see ConnLimitError.
	ErrConnLimit = errors.New("connection limit reached")
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
	msg := "lock " + elide.Quote(e.Name) + " is held"
	if by, paused := e.Paused(); paused {
		msg = "lock " + elide.Quote(e.Name) + " is paused by " + elide.String(by, elide.MaxRunes)
	} else if e.Holder != "" {
		msg += " by " + elide.String(e.Holder, elide.MaxRunes)
	}
	if !e.Until.IsZero() {
		msg += " until " + FormatTime(e.Until)
	}
	return msg
}

// Is makes errors.Is(err, ErrHeld) true, and errors.Is(err, ErrPaused)
// when the holder is a pause (see PausedBy).
func (e *HeldError) Is(target error) bool {
	_, paused := e.Paused()
	return target == ErrHeld || (paused && target == ErrPaused)
}

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

// Remedy is the grant.
func (e *PrivilegeError) Remedy() Remedy {
	return Remedy{Kind: RemedyGrant, Privilege: e.Privilege, Statement: e.Grant}
}

// MissingTableError says the lock table does not exist and gives the
// statement that creates it. It matches ErrNoTable.
type MissingTableError struct {
	Table     string
	CreateSQL string
	// Err is the server's error (`relation "schedlock" does not exist`);
	// nil when the table was found missing otherwise. Error does not
	// repeat it; Unwrap returns it.
	Err error
}

func (e *MissingTableError) Error() string {
	// The statement on one line: the message is one line wherever it goes.
	return fmt.Sprintf("lock table %s does not exist; %s", e.Table, e.Remedy())
}

// Unwrap returns the server's error.
func (e *MissingTableError) Unwrap() error { return e.Err }

// Remedy is creating the table.
func (e *MissingTableError) Remedy() Remedy {
	return Remedy{Kind: RemedyCreateTable, Table: e.Table, Statement: e.CreateSQL}
}

// Is makes errors.Is(err, ErrNoTable) true.
func (e *MissingTableError) Is(target error) bool { return target == ErrNoTable }

// ConnLimitError says which connection limit made the server refuse a
// connection and how to raise it. It matches ErrConnLimit and unwraps to
// the server's error. Dialects return it from Detect and the lockers in
// place of the driver's error (PostgreSQL SQLSTATE 53300, MySQL/MariaDB
// errors 1040, 1203 and 1226): a refused connection is an error at once,
// never a wait.
//
// The client side has no such limit unless the pool's owner sets one:
// schedlock never calls (*sql.DB).SetMaxOpenConns, and on a pool limited
// that way a lock operation waits for a free connection only as long as
// its context allows.
type ConnLimitError struct {
	// Limit is the setting that was reached, as the database names it:
	// "max_connections", "max_user_connections", "rolconnlimit",
	// "datconnlimit", …
	Limit string
	// Scope is what the limit counts: "server", "user", "role app",
	// "database test", …
	Scope string
	// Raise is the statement that raises the limit, with <n> for the new
	// value, e.g. "SET GLOBAL max_connections = <n>"; empty when unknown.
	Raise string
	// Restart is true when the new value applies only after a server
	// restart.
	Restart bool
	// Err is the server's own error (the driver's error type, without the
	// driver's connection details around it).
	Err error
}

func (e *ConnLimitError) Error() string {
	msg := fmt.Sprintf("connection limit %s (%s) reached", e.Limit, e.Scope)
	if e.Err != nil {
		msg += ": " + strings.Join(strings.Fields(e.Err.Error()), " ")
	}
	msg += "; close idle connections or raise the limit"
	if e.Raise != "" {
		msg += " with " + e.Raise
		if e.Restart {
			msg += " and a server restart"
		}
	}
	return msg
}

// Is makes errors.Is(err, ErrConnLimit) true.
func (e *ConnLimitError) Is(target error) bool { return target == ErrConnLimit }

// Unwrap returns the server's error.
func (e *ConnLimitError) Unwrap() error { return e.Err }

// Remedy is raising the limit.
func (e *ConnLimitError) Remedy() Remedy {
	return Remedy{Kind: RemedyRaiseLimit, Limit: e.Limit, Statement: e.Raise, Restart: e.Restart}
}

// ErrorClassifier is optionally implemented by a dialect's SessionOps and
// lease-table Builder: ClassifyError turns a driver error into one of the
// typed errors of this package (a *ConnLimitError, for example) or returns
// it unchanged. It must accept nil and return nil for it.
type ErrorClassifier interface {
	ClassifyError(err error) error
}

// Classify returns c.ClassifyError(err) when c is an ErrorClassifier, else
// err unchanged.
func Classify(c any, err error) error {
	if ec, ok := c.(ErrorClassifier); ok && err != nil {
		return ec.ClassifyError(err)
	}
	return err
}

// invalidf is an error matching ErrInvalid; string arguments longer than
// elide.MaxArgRunes are cut, so a message quoting user input stays one
// short line.
func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalid}, elide.Args(args)...)...)
}

// Invalidf returns an error matching ErrInvalid with a formatted message.
func Invalidf(format string, args ...any) error { return invalidf(format, args...) }
