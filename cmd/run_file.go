package cmd

import (
	"context"
	"fmt"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/internal/dsn"
)

// missingFile is the error for a database file (SQLite) that target names
// and that does not exist (see dsn.DSN.MissingFile, the check lock.Open
// shares), nil otherwise: opening a mistyped path would create an empty
// database, and the command would read, lock or write a database of its
// own. hint says what to do instead.
func missingFile(target *dsn.DSN, hint string) error {
	if err := target.MissingFile(); err != nil {
		return fmt.Errorf("%w: %s", err, hint)
	}
	return nil
}

// existingFile refuses a database file that does not exist, unless
// --create-table asks for a new one: every node with a mistyped path
// would lock a database of its own.
func (o *RunOptions) existingFile(target *dsn.DSN) error {
	if o.CreateTable {
		return nil
	}
	return missingFile(target, "check the path on every node, or give --create-table to create it with its lock table")
}

// connectAdmin connects an administrative command to target, refusing a
// database file that does not exist: the command would create it, empty,
// and list, unlock or write into a database of its own.
func connectAdmin(ctx context.Context, target *dsn.DSN, command string) (dialects.Backend, error) {
	if err := missingFile(target, "check the path; "+command+" does not create databases"); err != nil {
		return nil, err
	}
	return target.Connect(ctx)
}
