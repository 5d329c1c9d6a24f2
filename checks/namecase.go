package checks

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// errOneLock marks a name check's finding that two different names are
// one lock.
var errOneLock = errors.New("they are one lock")

// oneLockError is a finding that two names are one lock, said in its own
// words; it matches errOneLock.
type oneLockError struct{ msg string }

func (e *oneLockError) Error() string        { return e.msg }
func (e *oneLockError) Is(target error) bool { return target == errOneLock }

// checkNameCase asks whether "Nightly" and "nightly" name one lock or two,
// and reports the name column and its collation on a table. Two is
// right: names are data. One, on a table, is the name column's collation
// (ShedLock's DDL on MySQL and MariaDB takes the server's default, a
// case-insensitive one); the check fails with the statement an operator
// runs to make the column exact. One on the session strategy is the
// database's own rule for its named locks: a warning.
func checkNameCase(ctx context.Context, env *Env, tg target) (string, error) {
	l, err := tg.locker(ctx, env)
	if err != nil {
		return "", err
	}
	_, col, found, err := nameColumnOf(ctx, env, tg)
	if err != nil {
		return "", err
	}
	column := ""
	if found {
		column = describeColumn(col)
	}
	base := env.Name("")
	upper, lower := base+"Nightly", base+"nightly"
	a, err := env.Acquire(ctx, l, upper, dialects.Options{AtMost: time.Minute, Owner: env.Owner("A")})
	if err != nil {
		return "", fmt.Errorf("acquire %s: %w", short(upper), err)
	}
	b, err := env.Acquire(ctx, l, lower, dialects.Options{AtMost: time.Minute, Owner: env.Owner("B")})
	if err == nil {
		if err := b.Release(ctx); err != nil {
			return "", fmt.Errorf("release %s: %w", short(lower), err)
		}
		if err := a.Release(ctx); err != nil {
			return "", fmt.Errorf("release %s: %w", short(upper), err)
		}
		return "Nightly and nightly are two locks" + column, nil
	}
	if !errors.Is(err, dialects.ErrHeld) {
		return "", fmt.Errorf("acquire %s while %s is held: %w", short(lower), short(upper), err)
	}
	if err := a.Release(ctx); err != nil {
		return "", fmt.Errorf("release %s: %w", short(upper), err)
	}
	if !tg.isTable() {
		return "", remedied(Warnf("Nightly and nightly are one lock: this database compares its named locks without regard to case"),
			"give jobs names that differ in more than case, or use the table strategy on a table whose name column compares exactly")
	}
	msg := "Nightly and nightly are one lock" + column
	if found && col.Collation != "" {
		msg = fmt.Sprintf("Nightly and nightly are one lock: column %s %s compares names with collation %s", col.Column, col.Type, col.Collation)
	}
	return "", remedied(&oneLockError{msg}, collationRemedy(col, found))
}

// describeColumn is " (column lock_name varchar(128), collation X)" for a
// detail line.
func describeColumn(col dialects.NameColumn) string {
	s := " (column " + col.Column
	if col.Type != "" {
		s += " " + col.Type
	}
	if col.Collation != "" {
		s += ", collation " + col.Collation
	}
	return s + ")"
}

// collationRemedy is the operator's remedy for a table whose name column
// makes different names one lock: its collation, and the statement that
// makes the column compare exactly.
func collationRemedy(col dialects.NameColumn, found bool) string {
	what := "the table's name column compares names by a collation that makes some different names equal (case, accents, trailing spaces)"
	if found && col.Collation != "" {
		what = fmt.Sprintf("column %s compares names with collation %s, which makes some different names equal (case, accents, trailing spaces)", col.Column, col.Collation)
	}
	fix := "give the name column a binary collation"
	if found && col.ExactRemedy != "" {
		fix = col.ExactRemedy
	}
	return what + "; names that differ only there are one lock for every application using the table. The database operator fixes it with: " + fix
}

// charsetRemedy is the operator's remedy for a table whose name column
// cannot store some names' characters (a latin1 column): the statement
// that gives it a Unicode character set and an exact collation.
func charsetRemedy(col dialects.NameColumn, found bool) string {
	what := "the table's name column has a character set that cannot store some names' characters (accents beyond it, CJK, emoji)"
	if found && col.Collation != "" {
		what = fmt.Sprintf("column %s has the character set of collation %s, which cannot store some names' characters (accents beyond it, CJK, emoji)", col.Column, col.Collation)
	}
	fix := "give the name column a Unicode character set and a binary collation"
	if found && col.ExactRemedy != "" {
		fix = col.ExactRemedy
	}
	return what + "; such names cannot be locked on this table by any application. The database operator fixes it with: " + fix
}

// nameColumnRemedy is the remedy of a failed name check: on a table that
// made two names one lock, the collation's (collationRemedy); on a table
// whose name column could not store a name's characters, the character
// set's (charsetRemedy); else the developer's.
func nameColumnRemedy(ctx context.Context, env *Env, tg target, err error) string {
	const developer = "bind lock names as parameters, compare them with = under a binary collation, never with LIKE, and map long names with dialects.MapName"
	var charset *dialects.CharsetError
	oneLock, unstorable := errors.Is(err, errOneLock), errors.As(err, &charset)
	if !tg.isTable() || (!oneLock && !unstorable) {
		return developer
	}
	_, col, found, cerr := nameColumnOf(ctx, env, tg)
	if cerr != nil {
		found = false
	}
	if oneLock {
		return collationRemedy(col, found)
	}
	return charsetRemedy(col, found)
}
