package checks

import (
	"context"
	"time"
)

// timeResolution is the resolution of tl's stored lease times: a second
// when the table's time columns keep whole seconds (its locker rounds the
// lease end up to the second and binds at-least a second longer), else 0.
func timeResolution(tl any) time.Duration {
	if w, ok := tl.(interface{ UntilWholeSeconds() bool }); ok && w.UntilWholeSeconds() {
		return time.Second
	}
	return 0
}

// checkTimePrecision warns when the table's time columns keep whole
// seconds (MySQL DATETIME): schedlock then rounds each lease end up to the
// second and counts a non-zero at-least a second longer, so leases and
// at-least run up to a second or two longer than asked; the remedy gives
// the columns milliseconds.
func checkTimePrecision(ctx context.Context, env *Env, tg target) (string, error) {
	tl, err := tg.tableLocker(ctx, env)
	if err != nil {
		return "", err
	}
	if _, _, _, err := nameColumnOf(ctx, env, tg); err != nil {
		return "", err
	}
	if timeResolution(tl) == 0 {
		return "no whole-second time columns found (their precision is read from the catalog on MySQL and MariaDB only)", nil
	}
	s := tl.Schema()
	var remedy string
	if r, ok := tl.(interface{ WholeSecondsRemedy() string }); ok {
		remedy = r.WholeSecondsRemedy()
	}
	return "", remedied(Warnf("columns %s and %s of table %s keep whole seconds: lease ends are rounded up to the second and a non-zero at-least counted a second longer, so both run up to a second or two longer than asked",
		s.LockedAtCol, s.UntilCol, s.Table), remedy)
}
