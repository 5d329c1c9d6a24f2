package cmd

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/sqlkit"
	"github.com/schedlock/schedlock/internal/dsn"
)

// sessionNameFlags are --session-names and --session-key of run, locks ls
// and unlock: how session locks are named on the server. Given, they win
// over the DSN's x-session-names and x-session-key.
type sessionNameFlags struct {
	names, key string
}

// addSessionNameFlags adds --session-names and --session-key to c, with
// their completions.
func addSessionNameFlags(c *cobra.Command, f *sessionNameFlags) {
	fl := c.Flags()
	fl.StringVar(&f.names, "session-names", "", "session locks: scoped (MySQL/MariaDB lock DATABASE/NAME, PostgreSQL schedlock's own key) or raw (exactly what other programs lock for NAME: GET_LOCK('NAME'), or the key --session-key derives) (default scoped, or x-session-names)")
	fl.StringVar(&f.key, "session-key", "", "with --session-names raw on PostgreSQL: the advisory key of NAME: hashtext (pg_advisory_lock(hashtext('NAME'))), hashtextextended (hashtextextended('NAME', 0)), schedlock or key (NAME is the bigint key) (default x-session-key)")
	_ = c.RegisterFlagCompletionFunc("session-names", valuesCompletion([]string{dialects.SessionNamesScoped, dialects.SessionNamesRaw}))
	_ = c.RegisterFlagCompletionFunc("session-key", valuesCompletion(dialects.SessionKeys()))
}

// apply checks the flags and writes them into target's options, over the
// DSN's own; then the session names target asks for must suit its
// backend (a PostgreSQL version is checked once connected: see
// checkSessionNamesConnected). namespace is the command's namespace, which raw names
// do not take. Every error is a usage error of command, said in one line
// before anything is opened.
func (f sessionNameFlags) apply(target *dsn.DSN, namespace, command string) error {
	names := firstNonEmpty(f.names, target.Options[dsn.OptSessionNames])
	if f.names != "" {
		if _, err := dialects.ParseSessionNames(f.names, ""); err != nil {
			return &UsageError{Err: fmt.Errorf("--session-names: %w", err), Command: command}
		}
	}
	if f.key != "" {
		if names != dialects.SessionNamesRaw {
			return usageErrorf(command, "--session-key applies to raw session names: add --session-names raw")
		}
		if _, err := dialects.ParseSessionNames(dialects.SessionNamesRaw, f.key); err != nil {
			return &UsageError{Err: fmt.Errorf("--session-key: %w", err), Command: command}
		}
	}
	if f.names != "" {
		target.Options[dsn.OptSessionNames] = f.names
		if f.names != dialects.SessionNamesRaw {
			delete(target.Options, dsn.OptSessionKey) // the DSN's key was for raw names
		}
	}
	if f.key != "" {
		target.Options[dsn.OptSessionKey] = f.key
	}
	n, err := dialects.SessionNamesOf(target.Options)
	if err != nil {
		return &UsageError{Err: target.Scrub(err), Command: command}
	}
	if n.Raw && namespace != "" {
		return usageErrorf(command, "raw session names are taken as they are, without a namespace: give no --namespace or x-namespace with --session-names raw")
	}
	entry, err := target.Dialect()
	if err != nil {
		return nil // connecting says the backend is missing
	}
	if err := dialects.CheckSessionNames(entry, n, nil); err != nil {
		return &UsageError{Err: fmt.Errorf("--session-names/--session-key: %w", err), Command: command}
	}
	return nil
}

// checkSessionNamesConnected checks the session names against the database db
// turned out to be (hashtextextended needs PostgreSQL 11): a usage error
// of command when it cannot take them.
func checkSessionNamesConnected(db dialects.Backend, target *dsn.DSN, command string) error {
	sqlDB, ok := sqlkit.Of(db)
	if !ok {
		return nil
	}
	if _, err := sqlDB.SessionNames(); err != nil {
		if errors.Is(err, dialects.ErrInvalid) || errors.Is(err, dialects.ErrUnsupported) {
			return &UsageError{Err: fmt.Errorf("--session-names/--session-key: %w", target.Scrub(err)), Command: command}
		}
		return target.Scrub(err)
	}
	return nil
}

// given reports whether either flag was given.
func (f sessionNameFlags) given() bool { return f.names != "" || f.key != "" }

// withKey is f for --key: raw names, the name being the key itself (a
// PostgreSQL bigint, a GET_LOCK name). --session-key and --session-names
// scoped contradict it.
func (f sessionNameFlags) withKey(command string) (sessionNameFlags, error) {
	switch {
	case f.key != "":
		return f, usageErrorf(command, "--key names the key itself: give no --session-key with it")
	case f.names != "" && f.names != dialects.SessionNamesRaw:
		return f, usageErrorf(command, "--key names the lock as the server stores it: give no --session-names %s with it", f.names)
	}
	return sessionNameFlags{names: dialects.SessionNamesRaw, key: dialects.KeyAsIs}, nil
}
