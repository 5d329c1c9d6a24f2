package cmd

import (
	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/internal/dsn"
)

// `schedlock run --key KEY` and the session names of run: the lock is
// named by the key the server stores (a PostgreSQL advisory key, a
// GET_LOCK name), or by --name under --session-names/--session-key.

// useKey turns --key into the lock name and raw session names whose name
// is the key (sessionNameFlags.withKey).
func (o *RunOptions) useKey() error {
	if o.Key == "" {
		return nil
	}
	if o.Name != "" {
		return usageErrorf(o.Command, "give --name or --key, not both")
	}
	names, err := o.SessionNames.withKey(o.Command)
	if err != nil {
		return err
	}
	o.Name, o.SessionNames = o.Key, names
	return nil
}

// nameFlag is the flag that named the lock, for messages.
func (o *RunOptions) nameFlag() string {
	if o.Key != "" {
		return "--key"
	}
	return "--name"
}

// sessionNamesApply refuses session-name flags (and --key) with the table
// strategy, and session names the connected database cannot take.
func (o *RunOptions) sessionNamesApply(db dialects.Backend, target *dsn.DSN, strategy dialects.Strategy) error {
	if strategy != dialects.StrategySession {
		if o.SessionNames.given() {
			return usageErrorf(o.Command, "--key, --session-names and --session-key apply to the session strategy, not the %s strategy", strategy)
		}
		return nil
	}
	return checkSessionNamesConnected(db, target, o.Command)
}
