package checks

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// maxSkew is the host-versus-database clock difference above which the
// clock check warns.
const maxSkew = time.Second

func detectCheck() Check {
	return Check{ID: "detect", Title: "identify the database product and version", Run: checkDetect}
}

// strategyCheck is in the suite of a database on which no lock strategy
// is possible (a Redis that evicts keys, a table that cannot be used): it
// fails with why, so the report shows it beside the probes.
func strategyCheck(why error) Check {
	return Check{ID: "strategy", Title: "a lock strategy is possible", Run: func(context.Context, *Env) (string, error) {
		return "", &Remedied{Err: why, Remedy: "fix what the detail names, or keep the locks on another database"}
	}}
}

// checkDetect reports what detection found and the recommended strategy.
func checkDetect(_ context.Context, env *Env) (string, error) {
	info := env.Backend.Detected()
	if info.Product == "" {
		return "", fmt.Errorf("detection named no product (dialect %s, banner %q)", info.Dialect, info.Banner)
	}
	parts := []string{info.Product}
	if info.Version != "" {
		parts = append(parts, info.Version)
	}
	for _, extra := range []struct{ label, v string }{{"variant", info.Variant}, {"mode", info.Mode}} {
		if extra.v != "" {
			parts = append(parts, extra.label+" "+extra.v)
		}
	}
	strategy, why := env.Backend.Recommend()
	detail := fmt.Sprintf("%s (dialect %s); recommended strategy: %s (%s)", strings.Join(parts, " "), info.Dialect, strategy, why)
	if info.Version == "" {
		return detail, Warnf("detection found no version (banner %q)", info.Banner)
	}
	return detail, nil
}

// checkClock proves the database clock advances between two reads, at the
// pace of the host clock and with millisecond precision, and reports its
// skew against the host clock (warning above maxSkew).
func checkClock(ctx context.Context, env *Env, tg target) (string, error) {
	tl, err := tg.tableLocker(ctx, env)
	if err != nil {
		return "", err
	}
	name := env.Name("clock")
	if _, err := env.Acquire(ctx, tl, name, dialects.Options{AtMost: time.Minute, Owner: env.Owner("A")}); err != nil {
		return "", fmt.Errorf("acquire: %w", err)
	}
	const gap = 200 * time.Millisecond
	t0 := time.Now()
	r1, err := inspect(ctx, tl, name)
	if err != nil {
		return "", err
	}
	t1 := time.Now()
	if err := sleep(ctx, gap); err != nil {
		return "", err
	}
	t2 := time.Now()
	r2, err := inspect(ctx, tl, name)
	if err != nil {
		return "", err
	}
	t3 := time.Now()

	if r1.DBNow.IsZero() || r2.DBNow.IsZero() {
		return "", errors.New("Inspect returned no database time (DBNow is zero)")
	}
	advance := r2.DBNow.Sub(r1.DBNow)
	lo, hi := t2.Sub(t1)-20*time.Millisecond, t3.Sub(t0)+20*time.Millisecond
	skew := r1.DBNow.Sub(t0.Add(t1.Sub(t0) / 2))
	detail := fmt.Sprintf("database clock advanced %s over %s of host time; skew vs host %s", ms(advance), ms(t2.Sub(t1)), ms(skew))
	if advance < lo || advance > hi {
		return detail, remedied(fmt.Errorf("database clock advanced %s between two reads %s apart (want %s…%s)", ms(advance), ms(t2.Sub(t1)), ms(lo), ms(hi)),
			"the lease arithmetic must read the statement-time clock with millisecond precision (clock_timestamp(), NOW(3), SYSTIMESTAMP), not the transaction start")
	}
	if r1.LockedAt.After(r1.DBNow) {
		return detail, fmt.Errorf("locked-at %s is after the database's now %s", stamp(r1.LockedAt), stamp(r1.DBNow))
	}
	if abs(skew) > maxSkew {
		hint := ""
		if h := abs(skew).Round(time.Hour); h >= time.Hour && abs(abs(skew)-h) < 5*time.Second {
			hint = " (a whole number of hours: a time-zone mix-up between UTC and local time)"
		}
		return detail, &Remedied{
			Err:    Warnf("host and database clocks differ by %s%s; leases use the database clock, but listings show ages against the host clock", ms(skew), hint),
			Remedy: "synchronise the host and database server clocks (NTP)",
		}
	}
	return detail, nil
}
