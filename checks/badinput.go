package checks

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// maxErrorBytes bounds the message of a refused bad input: it says what
// is wrong without echoing a huge value.
const maxErrorBytes = 300

// badInput is one name or owner every backend must refuse.
type badInput struct {
	what  string
	name  string // lock name; the check's own valid name when empty
	owner string // owner; generated when empty
}

// checkBadNamesAndOwners proves names and owners are checked alike on
// every backend: a NUL byte, invalid UTF-8 or only white space is refused
// with ErrInvalid before anything is locked, in a short message that does
// not quote a huge value, and the name a NUL would cut the bad one down to
// ("x" for "x\x00y") stays free. On a lease table, Handle and Inspect
// refuse the same inputs.
func checkBadNamesAndOwners(ctx context.Context, env *Env, tg target) (string, error) {
	l, err := tg.locker(ctx, env)
	if err != nil {
		return "", err
	}
	base := env.Name("bad")
	huge := strings.Repeat("n", 100_000)
	cases := []badInput{
		{what: "name with a NUL byte", name: base + "\x00y"},
		{what: "name with a NUL byte at the end", name: base + "\x00"},
		{what: "100 KB name with a NUL byte", name: base + huge + "\x00"},
		{what: "name of invalid UTF-8", name: base + "\xff\xfe"},
		{what: "name of spaces", name: "   "},
		{what: "name of tabs and newlines", name: "\t\n\r"},
		{what: "name of Unicode spaces", name: "\u00a0\u3000"},
		{what: "owner with a NUL byte", owner: "host-a\x00evil"},
		{what: "owner of invalid UTF-8", owner: "host-\xc3\x28"},
		{what: "owner of spaces", owner: "  \t "},
		{what: "owner of 100 KB", owner: huge},
	}
	var tl dialects.LeaseLocker
	if tg.isTable() {
		if tl, err = tg.tableLocker(ctx, env); err != nil {
			return "", err
		}
	}
	var errs []error
	for _, c := range cases {
		name := c.name
		if name == "" {
			name = base
		}
		owner := c.owner
		if owner == "" {
			owner = env.Owner("A")
		}
		lease, err := l.Acquire(ctx, name, dialects.Options{AtMost: time.Minute, Owner: owner})
		if err == nil {
			releaseIfHeld(ctx, lease)
		}
		if e := refusedAsInvalid("acquire with a "+c.what, err); e != nil {
			errs = append(errs, e)
		}
		if tl != nil {
			_, herr := tl.Handle(name, owner, 0, dialects.Options{AtMost: time.Minute})
			if e := refusedAsInvalid("handle with a "+c.what, herr); e != nil {
				errs = append(errs, e)
			}
			if c.name != "" {
				_, _, ierr := tl.Inspect(ctx, name)
				if e := refusedAsInvalid("inspect of a "+c.what, ierr); e != nil {
					errs = append(errs, e)
				}
			}
		}
	}
	// "x\x00y" must not have become the lock "x".
	lease, err := env.Acquire(ctx, l, base, dialects.Options{AtMost: time.Minute, Owner: env.Owner("B")})
	if err != nil {
		errs = append(errs, fmt.Errorf("acquire %s after the bad names were refused: %w (a name cut at its NUL byte took it)", short(base), err))
	} else if err := lease.Release(ctx); err != nil {
		errs = append(errs, fmt.Errorf("release %s: %w", short(base), err))
	}
	if err := errors.Join(errs...); err != nil {
		return "", remedied(err, "validate every name with dialects.CheckName and every owner through Options.Normalize (dialects.CheckOwner) before sending anything")
	}
	return fmt.Sprintf("%d bad names and owners refused as invalid", len(cases)), nil
}

// refusedAsInvalid expects err to match ErrInvalid with a short message.
func refusedAsInvalid(what string, err error) error {
	if e := expectErr(what, err, dialects.ErrInvalid); e != nil {
		if len(e.Error()) > 2*maxErrorBytes {
			return fmt.Errorf("%s: got an error of %d bytes; want one matching %q", what, len(err.Error()), dialects.ErrInvalid)
		}
		return e
	}
	if n := len(err.Error()); n > maxErrorBytes {
		return fmt.Errorf("%s: the refusal is %d bytes long, more than %d: it quotes the input whole", what, n, maxErrorBytes)
	}
	return nil
}
