package checks

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// nameColumnOf reads the name column of tg's table from the catalog. ok is
// false for the session strategy, a locker that cannot read it, and a
// table whose catalog does not show it.
func nameColumnOf(ctx context.Context, env *Env, tg target) (tl dialects.LeaseLocker, col dialects.NameColumn, ok bool, err error) {
	if !tg.isTable() {
		return nil, col, false, nil
	}
	if tl, err = tg.tableLocker(ctx, env); err != nil {
		return nil, col, false, err
	}
	r, isReader := tl.(dialects.NameColumnReader)
	if !isReader {
		return tl, col, false, nil
	}
	col, found, err := r.NameColumn(ctx)
	return tl, col, found, err
}

// checkPresetNameLengths is the names.length check on a preset table
// (shedlock, sys_sched_lock), which stores names as they are: a
// one-character name, a name one short of the column's width beside one
// at the width, and a name at the width beside one differing in its last
// character are locked exactly; names one over the width and of 1000
// characters are refused with a *dialects.NameTooLongError naming the
// width, and write no row.
func checkPresetNameLengths(ctx context.Context, env *Env, tg target, tl dialects.LeaseLocker, col dialects.NameColumn) (string, error) {
	one := env.run.oneRune
	w := col.Width
	shorter := fitName(env.Name("len"), w-1, col)
	full := fitName(env.Name("len"), w, col)
	cases := []nameCase{
		{"one character", string(one), string(one + 1)},
		{fmt.Sprintf("%d %s vs %d", w-1, col.Unit, w), shorter, shorter + "x"},
		{fmt.Sprintf("%d %s, last one differs", w, col.Unit), full, otherLastRune(full)},
	}
	detail, err := runNameCases(ctx, env, tg, cases)
	if err != nil {
		return detail, err
	}
	l, err := tg.locker(ctx, env)
	if err != nil {
		return "", err
	}
	var errs []error
	for _, n := range []int{w + 1, max(1000, w+2)} {
		base := env.Name("len")
		if err := refusedTooLong(ctx, l, tl, base, fitName(base, n, col), col); err != nil {
			errs = append(errs, fmt.Errorf("%d %s: %w", n, col.Unit, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Sprintf("names up to the column's %d %s exact", w, col.Unit), remedied(err,
			"refuse, before anything is written, a name longer than the name column of a table other applications read (dialects.NameTooLongError); never store it shortened or hashed")
	}
	return fmt.Sprintf("%s; %d and %d %s refused with the column's width (%s %s), nothing written",
		detail, w+1, max(1000, w+2), col.Unit, col.Column, col.Type), nil
}

// refusedTooLong tries name, longer than col holds, and expects a
// *dialects.NameTooLongError naming col's width, and no row whose name
// starts with base (the part unique to this try).
func refusedTooLong(ctx context.Context, l dialects.Locker, tl dialects.LeaseLocker, base, name string, col dialects.NameColumn) error {
	lease, err := l.Acquire(ctx, name, dialects.Options{AtMost: time.Minute})
	if err == nil {
		releaseIfHeld(ctx, lease)
		return fmt.Errorf("acquire of %s was granted; the column holds %d %s", short(name), col.Width, col.Unit)
	}
	var tooLong *dialects.NameTooLongError
	switch {
	case !errors.As(err, &tooLong):
		return fmt.Errorf("acquire of %s: got %w; want a refusal naming the column's width (dialects.NameTooLongError)", short(name), err)
	case !errors.Is(err, dialects.ErrInvalid):
		return fmt.Errorf("acquire of %s: %w does not match %q", short(name), err, dialects.ErrInvalid)
	case tooLong.Column.Width != col.Width:
		return fmt.Errorf("acquire of %s was refused with width %d; the column holds %d", short(name), tooLong.Column.Width, col.Width)
	}
	lister, ok := tl.(interface {
		List(ctx context.Context) ([]dialects.Row, error)
	})
	if !ok {
		return nil
	}
	rows, err := lister.List(ctx)
	if err != nil {
		return fmt.Errorf("list the table after the refusal: %w", err)
	}
	for _, r := range rows {
		if strings.HasPrefix(r.Name, base) {
			return fmt.Errorf("the refused acquire of %s wrote row %s", short(name), short(r.Name))
		}
	}
	return nil
}

// fitName is base extended (or cut) to exactly n of col's units: with
// mixed-script text where the unit counts characters or UTF-16 code units
// (its characters are one unit each in both), with ASCII where it counts
// bytes.
func fitName(base string, n int, col dialects.NameColumn) string {
	if col.Unit != dialects.NameUnitBytes {
		return padName(base, n)
	}
	if len(base) >= n {
		return base[:n]
	}
	return base + strings.Repeat("x", n-len(base))
}
