package checks

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/schedlock/schedlock/dialects"
)

// nameCase is a lock name and a variant of it that must be another lock.
type nameCase struct {
	what    string
	name    string
	variant string
}

// checkSpecialNames proves names with characters that SQL quoting, LIKE
// patterns or encodings treat specially are locked exactly: each name is
// held, refused to others, independent of a name one character away, and
// freed by its release.
func checkSpecialNames(ctx context.Context, env *Env, tg target) (string, error) {
	cases := []nameCase{}
	for _, c := range []struct{ what, name, variant string }{
		{"single quote", "a'b", "axb"},
		{"double quote", `a"b`, "axb"},
		{"percent", "a%b", "axb"},
		{"underscore", "a_b", "axb"},
		{"backslash", `a\b`, "axb"},
		{"semicolon", "a;b", "axb"},
		{"spaces", "a b  c", "axb  c"},
		{"multi-byte UTF-8", "日本語 ключ 🔒", "日本語 ключ 🔓"},
	} {
		base := env.Name("")
		cases = append(cases, nameCase{c.what, base + c.name, base + c.variant})
	}
	return runNameCases(ctx, env, tg, cases)
}

// checkDistinctNames proves names that differ only in a character escaping
// or pattern matching would confuse are different locks.
func checkDistinctNames(ctx context.Context, env *Env, tg target) (string, error) {
	cases := []nameCase{}
	for _, c := range []struct{ what, name, variant string }{
		{"percent vs underscore", "a%b", "a_b"},
		{"one vs two backslashes", `a\b`, `a\\b`},
		{"one vs two single quotes", "a'b", "a''b"},
		{"one vs two double quotes", `a"b`, `a""b`},
		{"trailing space", "a", "a "},
		{"percent vs anything", "%", "a"},
	} {
		base := env.Name("")
		cases = append(cases, nameCase{c.what, base + c.name, base + c.variant})
	}
	return runNameCases(ctx, env, tg, cases)
}

// checkNameLengths proves a one-character name, names at common backend
// limits (64, 255) next to one character longer, and a 1000-character name
// are locked exactly. On a preset table, which stores names as they are,
// names up to its column's width are, and longer ones are refused
// (checkPresetNameLengths).
func checkNameLengths(ctx context.Context, env *Env, tg target) (string, error) {
	tl, col, found, err := nameColumnOf(ctx, env, tg)
	if err != nil {
		return "", err
	}
	if found && col.Width > 0 && tl.Schema().StoresNamesVerbatim() {
		return checkPresetNameLengths(ctx, env, tg, tl, col)
	}
	one := env.run.oneRune
	cases := []nameCase{{"one character", string(one), string(one + 1)}}
	for _, n := range []int{64, 255} {
		name := padName(env.Name("len"), n)
		cases = append(cases, nameCase{fmt.Sprintf("%d characters vs %d", n, n+1), name, name + "x"})
	}
	long := padName(env.Name("len"), 1000)
	cases = append(cases, nameCase{"1000 characters, last one differs", long, otherLastRune(long)})
	return runNameCases(ctx, env, tg, cases)
}

// runNameCases runs every case and reports all the names that failed.
func runNameCases(ctx context.Context, env *Env, tg target, cases []nameCase) (string, error) {
	l, err := tg.locker(ctx, env)
	if err != nil {
		return "", err
	}
	var tl dialects.LeaseLocker
	if tg.isTable() {
		if tl, err = tg.tableLocker(ctx, env); err != nil {
			return "", err
		}
	}
	var errs []error
	var passed []string
	for _, c := range cases {
		err := nameRoundTrip(ctx, env, l, tl, c)
		var unstorable *dialects.UnstorableNameError
		switch {
		case errors.As(err, &unstorable):
			// A preset table refused a name it could not keep apart:
			// refused, not confused with the other.
			passed = append(passed, c.what+" (refused: "+unstorable.Why+")")
		case err != nil:
			errs = append(errs, fmt.Errorf("%s: %w", c.what, err))
		default:
			passed = append(passed, c.what)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Sprintf("%d of %d names exact", len(passed), len(cases)), remedied(err, nameColumnRemedy(ctx, env, tg, err))
	}
	return fmt.Sprintf("%d names exact: %s", len(cases), strings.Join(passed, ", ")), nil
}

// nameRoundTrip holds c.name, proves it is refused to others while c.variant
// is free, holds both, releases c.name without freeing c.variant, and
// releases both. tl, when not nil, must show the holder under c.name.
func nameRoundTrip(ctx context.Context, env *Env, l dialects.Locker, tl dialects.LeaseLocker, c nameCase) error {
	opts := func(role string) dialects.Options {
		return dialects.Options{AtMost: time.Minute, Owner: env.Owner(role)}
	}
	aOpts := opts("A")
	a, err := env.Acquire(ctx, l, c.name, aOpts)
	if err != nil {
		return fmt.Errorf("acquire %s: %w", short(c.name), err)
	}
	if a.Name() != c.name {
		return fmt.Errorf("lease name is %s, want %s", short(a.Name()), short(c.name))
	}
	if tl != nil {
		row, err := inspect(ctx, tl, c.name)
		if err != nil {
			return err
		}
		if row.Owner != aOpts.Owner {
			return fmt.Errorf("inspect %s shows owner %q, want %q", short(c.name), row.Owner, aOpts.Owner)
		}
	}
	if err := refusedAcquire(ctx, l, c.name, opts("B").Owner, "same name"); err != nil {
		return err
	}
	v, err := env.Acquire(ctx, l, c.variant, opts("C"))
	if errors.Is(err, dialects.ErrHeld) {
		return fmt.Errorf("%s was refused while only %s is held: %w", short(c.variant), short(c.name), errOneLock)
	}
	if err != nil {
		return fmt.Errorf("acquire %s: %w", short(c.variant), err)
	}
	if err := refusedAcquire(ctx, l, c.variant, opts("B").Owner, "the other name"); err != nil {
		return err
	}
	if err := a.Release(ctx); err != nil {
		return fmt.Errorf("release %s: %w", short(c.name), err)
	}
	if err := refusedAcquire(ctx, l, c.variant, opts("B").Owner, "after releasing "+short(c.name)); err != nil {
		return err
	}
	b, err := env.Acquire(ctx, l, c.name, opts("B"))
	if err != nil {
		return fmt.Errorf("acquire %s after its release: %w", short(c.name), err)
	}
	if err := b.Release(ctx); err != nil {
		return fmt.Errorf("release %s: %w", short(c.name), err)
	}
	if err := v.Release(ctx); err != nil {
		return fmt.Errorf("release %s: %w", short(c.variant), err)
	}
	return nil
}

// padName extends base to exactly n runes with readable mixed-script text
// (or cuts it to n runes).
func padName(base string, n int) string {
	const filler = "long name ✓ ключ 名前 "
	var b strings.Builder
	count := 0
	for _, r := range base {
		if count == n {
			return b.String()
		}
		b.WriteRune(r)
		count++
	}
	for count < n {
		for _, r := range filler {
			if count == n {
				break
			}
			b.WriteRune(r)
			count++
		}
	}
	return b.String()
}

// otherLastRune returns s with its last rune replaced by a different one.
func otherLastRune(s string) string {
	last, size := utf8.DecodeLastRuneInString(s)
	repl := 'y'
	if last == repl {
		repl = 'z'
	}
	return s[:len(s)-size] + string(repl)
}
