//go:build unix

package cmd

import (
	"strings"
	"testing"

	"github.com/schedlock/schedlock/checks"
)

// A missing lock table's remedy names a flag the command has: `run` has
// --create-table; `locks ls` and `unlock` do not, so theirs names
// `schedlock run --create-table`. ZooKeeper's lock table is a parent
// node, missing until created.
func TestMissingTableRemedyNamesAFlagTheCommandHas(t *testing.T) {
	onEachStore(t, []string{"zookeeper"}, func(t *testing.T, _, dsn string) {
		table := checks.NewPrefix()
		for _, tc := range []struct {
			args, tail []string
			code       int
			want       string
		}{
			{[]string{"run", "--name", "x"}, []string{"--", "true"}, CodeError, "create it with --create-table or run: create "},
			{[]string{"locks", "ls"}, nil, CodeUsage, "create it with schedlock run --create-table or run: create "},
			{[]string{"unlock", "x", "--yes"}, nil, CodeUsage, "create it with schedlock run --create-table or run: create "},
		} {
			args := append(append(tc.args, "--dsn", dsn, "--table", table), tc.tail...)
			r := runCmd(t, false, nil, args...)
			if code := ExitCode(r.err); code != tc.code {
				t.Errorf("%s: exit %d (%v), want %d", tc.args[0], code, r.err, tc.code)
				continue
			}
			if msg := r.err.Error(); !strings.Contains(msg, tc.want) {
				t.Errorf("%s: error %q: want %q", tc.args[0], msg, tc.want)
			}
		}
	})
}
