package livetest

import "testing"

// DSN returns a set variable's value and skips, naming the variable, when
// it is empty.
func TestDSN(t *testing.T) {
	t.Setenv(Redis, "redis://127.0.0.1:1/0")
	if got := DSN(t, Redis); got != "redis://127.0.0.1:1/0" {
		t.Errorf("DSN = %q", got)
	}
	t.Setenv(Etcd, "")
	var sub *testing.T
	reached := false
	t.Run("unset", func(t *testing.T) {
		sub = t
		DSN(t, Etcd)
		reached = true
	})
	if reached || !sub.Skipped() {
		t.Error("DSN of an empty variable did not skip")
	}
}
