package leasesim

import (
	"database/sql/driver"
	"time"
)

// Bound is an Env.Placeholder that reads the values bound to a
// statement: placeholder n is args[n-1].
func Bound(args []driver.NamedValue) func(n int) (any, bool) {
	return func(n int) (any, bool) {
		if n < 1 || n > len(args) {
			return nil, false
		}
		return args[n-1].Value, true
	}
}

// Systimestamp is the Env of Oracle's and Dameng's statements on a
// database whose clock reads now (UTC) for the whole statement, as
// SYSTIMESTAMP does, with the values args bound to :1, :2, … (or "?").
func Systimestamp(now time.Time, args []driver.NamedValue) Env {
	return Env{
		Ident: func(name string) (any, bool) {
			if name == "SYSTIMESTAMP" {
				return now, true
			}
			return nil, false
		},
		Placeholder: Bound(args),
		Func: func(name string, vals []any) (any, bool, error) {
			if name == "SYS_EXTRACT_UTC" && len(vals) == 1 {
				return vals[0], true, nil // the clock reads UTC already
			}
			return nil, false, nil
		},
	}
}
