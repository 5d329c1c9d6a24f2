package cmd

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/schedlock/schedlock/internal/dsn"
)

// existingFile refuses a database file (SQLite) that does not exist,
// unless --create-table asks for a new one: opening a mistyped path would
// create an empty database, and every node with the typo would lock a
// database of its own. In-memory and file: URI databases are left to the
// driver.
func (o *RunOptions) existingFile(target *dsn.DSN) error {
	if o.CreateTable || !target.IsFile() || target.Path == "" || strings.HasPrefix(target.Path, ":memory:") || strings.HasPrefix(target.Path, "file:") {
		return nil
	}
	_, err := os.Stat(target.Path)
	if errors.Is(err, os.ErrNotExist) {
		family := target.Family
		if entry, derr := target.Dialect(); derr == nil && entry.Title != "" {
			family = entry.Title
		}
		return fmt.Errorf("%s file %s does not exist: check the path on every node, or give --create-table to create it with its lock table", family, target.Path)
	}
	return nil
}
