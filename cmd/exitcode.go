package cmd

import (
	"context"
	"errors"
)

// CodeMaxRuntime is the exit code of `schedlock run` when COMMAND ran past
// --max-runtime and schedlock stopped it (SIGTERM, SIGKILL after
// --kill-grace) and released the lock: 124, as timeout(1) exits when its
// command times out. Like CodeLeaseLost (113) it lies outside schedlock's
// other codes (0-3, 130), the shells' (126, 127, 128+signal) and
// sysexits.h (64-78).
const CodeMaxRuntime = 124

// ExitCode is the exit code err calls for. main exits with it, and run
// records it (hooks, metrics, run history) with the rule of runExitCode:
//
//	0   no error
//	1   any other error (connection, query, I/O)
//	2   *UsageError: bad flags, arguments, DSN or option values
//	3   *ExitError with Code 3: ran fine, the answer is negative (run:
//	    any *ExitError gives its Code, e.g. COMMAND's own exit code)
//	130 ErrInterrupted or context.Canceled: SIGINT/SIGTERM, declined
func ExitCode(err error) int {
	var exit *ExitError
	var usage *UsageError
	switch {
	case err == nil:
		return CodeOK
	case errors.Is(err, ErrInterrupted), errors.Is(err, context.Canceled):
		return CodeInterrupted
	case errors.As(err, &usage):
		return CodeUsage
	case errors.As(err, &exit):
		return exit.Code
	}
	return CodeError
}

// runExitCode is ExitCode with Run's rule that a signal turns any error
// but an *ExitError into 130: run's hooks see the code main will exit
// with before Run has wrapped the error. A --timeout that ran out is not
// a signal.
func runExitCode(ctx context.Context, err error) int {
	code := ExitCode(err)
	var exit *ExitError
	if code == CodeError && !errors.As(err, &exit) && ctx.Err() != nil && !timedOut(ctx) {
		return CodeInterrupted
	}
	return code
}
