package cmd

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// locks ls colours a terminal unless TERM=dumb or NO_COLOR; --color
// always and CLICOLOR_FORCE=1 give the coloured terminal table on a pipe
// (for less -R); --color never and --no-color give none.
func TestLocksColor(t *testing.T) {
	db, locker := sqliteLocks(t)
	lease, err := locker.Acquire(context.Background(), "colour", dialects.Options{AtMost: time.Hour, Owner: "node-a"})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = lease.Release(context.Background()) }()
	const green = "\x1b[32m"
	cases := []struct {
		name         string
		tty          bool
		env          map[string]string
		flags        []string
		colour, boxy bool
	}{
		{"terminal", true, nil, nil, true, true},
		{"TERM=dumb", true, map[string]string{"TERM": "dumb"}, nil, false, true},
		{"NO_COLOR", true, map[string]string{"NO_COLOR": "1"}, nil, false, true},
		{"pipe", false, nil, nil, false, false},
		{"CLICOLOR_FORCE on a pipe", false, map[string]string{"CLICOLOR_FORCE": "1"}, nil, true, true},
		{"--color always on a pipe", false, nil, []string{"--color", "always"}, true, true},
		{"SCHEDLOCK_COLOR=always on a pipe", false, map[string]string{"SCHEDLOCK_COLOR": "always"}, nil, true, true},
		{"--color always on a dumb terminal", true, map[string]string{"TERM": "dumb"}, []string{"--color", "always"}, true, true},
		{"NO_COLOR over CLICOLOR_FORCE", false, map[string]string{"CLICOLOR_FORCE": "1", "NO_COLOR": "1"}, nil, false, false},
		{"--color never", true, nil, []string{"--color", "never"}, false, true},
		{"--no-color over CLICOLOR_FORCE", false, map[string]string{"CLICOLOR_FORCE": "1"}, []string{"--no-color"}, false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := runCmd(t, tc.tty, tc.env, append([]string{"locks", "ls", "--dsn", db}, tc.flags...)...)
			if r.err != nil {
				t.Fatal(r.err)
			}
			if got := strings.Contains(r.stdout, green+"held"); got != tc.colour {
				t.Errorf("colour %v, want %v:\n%s", got, tc.colour, r.stdout)
			}
			if got := strings.Contains(r.stdout, "│"); got != tc.boxy {
				t.Errorf("terminal table %v, want %v:\n%s", got, tc.boxy, r.stdout)
			}
		})
	}
	for _, flags := range [][]string{{"--color", "sometimes"}, {"--color", "always", "--no-color"}} {
		r := runCmd(t, false, nil, append([]string{"locks", "ls", "--dsn", db}, flags...)...)
		var usage *UsageError
		if !errors.As(r.err, &usage) || strings.Contains(r.err.Error(), "\n") {
			t.Errorf("%v: %v, want one usage line (exit 2)", flags, r.err)
		}
	}
}
