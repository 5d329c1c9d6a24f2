package cmd

import (
	"errors"
	"fmt"

	"github.com/schedlock/schedlock/internal/dsn"
)

// EnvDSNFile names a file holding the DSN, read when neither --dsn,
// --dsn-file nor $SCHEDLOCK_DSN is given (see dsn.Resolve).
const EnvDSNFile = dsn.EnvDSNFile

// DSNVariables are the environment variables a DSN may come from; `run`
// removes them from its command's environment unless --keep-env.
var DSNVariables = dsn.Variables

// resolveTarget finds the DSN of command (dsn.Resolve: --dsn, --dsn-file,
// $SCHEDLOCK_DSN, $SCHEDLOCK_DSN_FILE, $DATABASE_URL), parses it and adds
// its secrets to f.Scrubber. When none is set it takes the DSN fallback
// returns, or without a fallback returns dsn.ErrNoDSN. It returns where
// the DSN came from; every error but fallback's is a usage error, a parse
// error prefixed with that source. The DSN file warning goes to stderr
// unless --quiet.
func resolveTarget(f *Factory, g *GlobalOptions, command string, fallback func() (raw, source string, err error)) (*dsn.DSN, string, error) {
	s := dsn.Sources{DSN: g.DSN, File: g.DSNFile, Getenv: f.Getenv}
	if !g.Quiet && f.IO != nil {
		s.Warn = f.IO.ErrOut
	}
	raw, source, err := dsn.Resolve(s)
	if errors.Is(err, dsn.ErrNoDSN) && fallback != nil {
		if raw, source, err = fallback(); err != nil {
			return nil, "", err
		}
	}
	if err != nil {
		return nil, "", &UsageError{Err: err, Command: command}
	}
	d, err := dsn.Parse(raw)
	if err != nil {
		return nil, "", &UsageError{Err: fmt.Errorf("%s: %w", source, err), Command: command}
	}
	f.Scrubber.Merge(d.Scrubber())
	return d, source, nil
}
