package dsn

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// MissingFileError is a database file (SQLite) that a DSN names and that
// does not exist. Opening it would create an empty database, and a
// mistyped path would lock, list or change a database of its own. It
// matches os.ErrNotExist.
type MissingFileError struct {
	Title string // the database's name, e.g. SQLite
	Path  string
}

func (e *MissingFileError) Error() string {
	return fmt.Sprintf("%s file %s does not exist", e.Title, e.Path)
}

// Is makes errors.Is(err, os.ErrNotExist) true.
func (e *MissingFileError) Is(target error) bool { return target == os.ErrNotExist }

// CreateFile reports whether the DSN asks for a database file that does
// not exist to be created (x-create-file=true).
func (o Options) CreateFile() bool {
	create, _ := strconv.ParseBool(o[OptCreateFile])
	return create
}

// MissingFile is the check every opener of a DSN shares — the schedlock
// command and the lock and claim packages: a *MissingFileError when d
// names a database file that does not exist and its DSN does not ask to
// create it (x-create-file=true); nil otherwise, and for servers,
// in-memory databases and file: URIs, which are left to the driver. It
// reads the file system only.
func (d *DSN) MissingFile() error {
	if !d.IsFile() || d.Path == "" || strings.HasPrefix(d.Path, ":memory:") || strings.HasPrefix(d.Path, "file:") || d.Options.CreateFile() {
		return nil
	}
	if _, err := os.Stat(d.Path); !errors.Is(err, os.ErrNotExist) {
		return nil
	}
	title := d.Family
	if entry, err := d.Dialect(); err == nil && entry.Title != "" {
		title = entry.Title
	}
	return &MissingFileError{Title: title, Path: d.Path}
}
