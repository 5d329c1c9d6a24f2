package main

import (
	"errors"
	"testing"

	"github.com/schedlock/schedlock/cmd"
)

// recordingLog stands for stderr under --log-format json.
type recordingLog struct {
	msg  string
	code int
}

func (r *recordingLog) Write(p []byte) (int, error) { return len(p), errors.New("printed, not logged") }
func (r *recordingLog) LogError(msg string, code int) {
	r.msg, r.code = msg, code
}

// TestExitCodeLogsTheError: under a json log the final error is one
// record with its exit code, not a printed line.
func TestExitCodeLogsTheError(t *testing.T) {
	var log recordingLog
	err := &cmd.UsageError{Err: errors.New("bad flag\nsecond line")}
	if got := exitCode(err, &log); got != cmd.CodeUsage {
		t.Errorf("exit %d, want %d", got, cmd.CodeUsage)
	}
	if log.msg != "bad flag; second line" || log.code != cmd.CodeUsage {
		t.Errorf("logged %q with code %d", log.msg, log.code)
	}
}
