//go:build unix

package cmd

import (
	"strings"
	"testing"
)

// unlock of a lock no key holds, on etcd, whose lock space needs no
// table and keeps no key of a free lock: exit 3, saying so, not that no
// lock table was found.
func TestUnlockFreeLockOnEtcd(t *testing.T) {
	onEachStore(t, []string{"etcd"}, func(t *testing.T, _, dsn string) {
		for _, extra := range [][]string{nil, {"--table", storeTable(t, dsn)}} {
			r := runCmd(t, false, nil, append([]string{"unlock", "never-taken", "--yes", "--dsn", dsn}, extra...)...)
			if code := ExitCode(r.err); code != CodeNegative {
				t.Fatalf("%v: exit %d (%v), want %d", extra, code, r.err, CodeNegative)
			}
			msg := r.err.Error()
			if !strings.Contains(msg, `lock "never-taken" is not held: no key holds it`) || strings.Contains(msg, "no lock table") {
				t.Errorf("%v: error %q: want it to say no key holds the lock", extra, msg)
			}
		}
	})
}
