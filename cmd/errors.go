package cmd

import (
	"errors"
	"fmt"
	"github.com/schedlock/schedlock/internal/elide"
)

// Exit codes. ExitCode maps errors to them; main exits with it, and
// nothing else exits.
const (
	CodeOK          = 0   // success
	CodeError       = 1   // runtime failure: connection, query, I/O
	CodeUsage       = 2   // bad flags, arguments, DSN or option values
	CodeNegative    = 3   // ran fine and the answer is no (a check failed)
	CodeInterrupted = 130 // SIGINT/SIGTERM, or the user declined
)

// ErrInterrupted matches the error of a command stopped by SIGINT or
// SIGTERM (or a prompt the user declined).
var ErrInterrupted = errors.New("interrupted")

// ExitError carries the exit code a command wants, with its message. It is
// how a command says "ran fine, the answer is negative" (CodeNegative).
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string { return e.Err.Error() }

// Unwrap returns the cause.
func (e *ExitError) Unwrap() error { return e.Err }

// UsageError is a mistake in how the command was called: a bad flag,
// argument, output format, DSN or option value. It maps to CodeUsage.
type UsageError struct {
	Err error
	// Command is the command path for the help hint, e.g. "schedlock selfcheck".
	Command string
}

func (e *UsageError) Error() string {
	if e.Command == "" {
		return e.Err.Error()
	}
	return fmt.Sprintf("%v (see '%s --help')", e.Err, e.Command)
}

// Unwrap returns the cause.
func (e *UsageError) Unwrap() error { return e.Err }

// usageErrorf returns a *UsageError for command path.
func usageErrorf(command, format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, elide.Args(args)...), Command: command}
}
