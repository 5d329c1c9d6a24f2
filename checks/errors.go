package checks

import (
	"errors"
	"fmt"

	"github.com/schedlock/schedlock/dialects"
)

// Sentinels a check returns (wrapped, see Skipf and Warnf) to end with a
// status other than pass or fail.
var (
	// ErrSkip: the check does not apply to this database or strategy.
	ErrSkip = errors.New("skipped")
	// ErrWarn: the check passed with a reservation worth reading.
	ErrWarn = errors.New("warning")
)

// statusError is an error whose text is only its message but which matches
// a status sentinel with errors.Is.
type statusError struct {
	sentinel error
	msg      string
}

func (e *statusError) Error() string        { return e.msg }
func (e *statusError) Is(target error) bool { return target == e.sentinel }

// Skipf returns an error matching ErrSkip whose text is the formatted
// message, without a "skipped:" prefix.
func Skipf(format string, args ...any) error {
	return &statusError{sentinel: ErrSkip, msg: fmt.Sprintf(format, args...)}
}

// Warnf returns an error matching ErrWarn whose text is the formatted
// message, without a "warning:" prefix.
func Warnf(format string, args ...any) error {
	return &statusError{sentinel: ErrWarn, msg: fmt.Sprintf(format, args...)}
}

// Remedied is a check error that says how to fix it. The Remedy ends up in
// Result.Remedy.
type Remedied struct {
	Err    error
	Remedy string
}

func (e *Remedied) Error() string { return e.Err.Error() }

// Unwrap returns the cause.
func (e *Remedied) Unwrap() error { return e.Err }

// remedied wraps err with a remedy; nil stays nil.
func remedied(err error, remedy string) error {
	if err == nil {
		return nil
	}
	return &Remedied{Err: err, Remedy: remedy}
}

// classify turns what a check returned into a status, detail and remedy:
//   - nil: pass;
//   - a *dialects.PrivilegeError anywhere in err: fail, or skip for an
//     optional check, with the grant as remedy;
//   - ErrSkip: skip; ErrWarn: warn; anything else: fail.
//
// A *Remedied anywhere in err supplies the remedy, before the grant.
func classify(c Check, detail string, err error) (Status, string, string) {
	if err == nil {
		return StatusPass, detail, ""
	}
	if detail == "" {
		detail = err.Error()
	} else {
		detail += "; " + err.Error()
	}
	remedy := ""
	var rem *Remedied
	if errors.As(err, &rem) {
		remedy = rem.Remedy
	}
	var pe *dialects.PrivilegeError
	if errors.As(err, &pe) {
		if remedy == "" {
			remedy = pe.Grant
		}
		if remedy == "" {
			remedy = "grant the database user " + pe.Privilege
		}
		if c.Optional {
			return StatusSkip, detail, remedy
		}
		return StatusFail, detail, remedy
	}
	switch {
	case errors.Is(err, ErrSkip):
		return StatusSkip, detail, remedy
	case errors.Is(err, ErrWarn):
		return StatusWarn, detail, remedy
	default:
		return StatusFail, detail, remedy
	}
}
