package cmd

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// x-max-conns=0 or a negative count is a usage error in one line, before
// anything connects.
func TestMaxConnsRefused(t *testing.T) {
	db := filepath.Join(t.TempDir(), "locks.db")
	for _, v := range []string{"0", "-1"} {
		t.Run(v, func(t *testing.T) {
			r := runCmd(t, false, nil, "detect", "--dsn", db+"?x-max-conns="+v)
			var usage *UsageError
			if !errors.As(r.err, &usage) || ExitCode(r.err) != CodeUsage {
				t.Fatalf("error %v: want a usage error (exit 2)", r.err)
			}
			if msg := r.err.Error(); !strings.Contains(msg, "x-max-conns") || !strings.Contains(msg, "at least 1") || strings.Contains(msg, "\n") {
				t.Errorf("error %q: want one line naming x-max-conns and its minimum", msg)
			}
		})
	}
}
