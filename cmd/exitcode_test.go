package cmd

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// run records the code main will exit with: ExitCode's, and 130 for an
// error a signal ended unless the command chose its code or a --timeout
// ran out.
func TestRunExitCode(t *testing.T) {
	live := context.Background()
	signalled, cancel := context.WithCancel(live)
	cancel()
	timedOutCtx, cancelT := context.WithDeadline(live, time.Unix(0, 0))
	defer cancelT()
	plain := errors.New("connection refused")
	for _, c := range []struct {
		name string
		ctx  context.Context
		err  error
		want int
	}{
		{"success", live, nil, CodeOK},
		{"error", live, plain, CodeError},
		{"usage", live, &UsageError{Err: plain}, CodeUsage},
		{"negative", live, &ExitError{Code: CodeNegative, Err: plain}, CodeNegative},
		{"child's code", live, &ExitError{Code: 42, Err: plain}, 42},
		{"canceled", live, fmt.Errorf("query: %w", context.Canceled), CodeInterrupted},
		{"declined", live, fmt.Errorf("%w: declined", ErrInterrupted), CodeInterrupted},
		{"signal ends an error", signalled, plain, CodeInterrupted},
		{"signal keeps a chosen code 1", signalled, &ExitError{Code: CodeError, Err: plain}, CodeError},
		{"signal keeps usage", signalled, &UsageError{Err: plain}, CodeUsage},
		{"timeout is no signal", timedOutCtx, plain, CodeError},
	} {
		if got := runExitCode(c.ctx, c.err); got != c.want {
			t.Errorf("%s: runExitCode = %d, want %d", c.name, got, c.want)
		}
		if c.ctx == live {
			if got := ExitCode(c.err); got != c.want {
				t.Errorf("%s: ExitCode = %d, want %d", c.name, got, c.want)
			}
		}
	}
}
