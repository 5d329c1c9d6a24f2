package dialects

import (
	"context"
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/schedlock/schedlock/internal/elide"
)

// Units a NameColumn's width counts.
const (
	// NameUnitCharacters: Unicode characters (VARCHAR(n) in PostgreSQL,
	// MySQL, SQLite, Oracle's n CHAR).
	NameUnitCharacters = "characters"
	// NameUnitBytes: bytes of the UTF-8 encoding (Oracle's and Dameng's
	// byte length semantics).
	NameUnitBytes = "bytes"
	// NameUnitUTF16: UTF-16 code units (SQL Server's nvarchar(n)).
	NameUnitUTF16 = "UTF-16 code units"
)

// NameColumn is a lock table's name column as the database's catalog
// declares it (information_schema.COLUMNS, pg_attribute, ALL_TAB_COLUMNS,
// sys.columns, PRAGMA table_info).
type NameColumn struct {
	// Column is the column's name.
	Column string `json:"column"`
	// Type is its declared type as the catalog spells it ("varchar(128)").
	Type string `json:"type,omitempty"`
	// Width is the longest name it stores, counted in Unit; 0 means no
	// declared limit (TEXT) or a limit the catalog does not give.
	Width int    `json:"width"`
	Unit  string `json:"unit,omitempty"`
	// Collation is how it compares names ("utf8mb4_general_ci"); empty
	// where the database does not report one.
	Collation string `json:"collation,omitempty"`
	// ExactRemedy is the statement an operator runs to make the column
	// compare names exactly (case and accents kept apart), or empty when
	// the database has none to offer.
	ExactRemedy string `json:"exact_remedy,omitempty"`
}

// Length is name's length in c's unit.
func (c NameColumn) Length(name string) int {
	switch c.Unit {
	case NameUnitBytes:
		return len(name)
	case NameUnitUTF16:
		n := 0
		for _, r := range name {
			if l := utf16.RuneLen(r); l > 0 {
				n += l
			} else {
				n++
			}
		}
		return n
	}
	return utf8.RuneCountInString(name)
}

// Fits reports whether the column stores name as it is.
func (c NameColumn) Fits(name string) bool { return c.Width <= 0 || c.Length(name) <= c.Width }

// NameColumnReader is implemented by table lockers that read their name
// column from the database's catalog. found is false when the catalog has
// no such column (the table is missing). A locker reads it once and keeps
// what it found.
type NameColumnReader interface {
	NameColumn(ctx context.Context) (col NameColumn, found bool, err error)
}

// NameTooLongError refuses a lock name longer than the name column of a
// preset table (shedlock, sys_sched_lock): other applications read those
// tables, so names are stored as they are, never shortened or hashed.
// It matches ErrInvalid.
type NameTooLongError struct {
	Name   string
	Table  string
	Column NameColumn
}

func (e *NameTooLongError) Error() string {
	unit := e.Column.Unit
	if unit == "" {
		unit = NameUnitCharacters
	}
	return fmt.Sprintf("lock name %s is %d %s long; column %s of table %s stores at most %d: use a shorter name",
		quoteStart(e.Name), e.Column.Length(e.Name), unit, e.Column.Column, e.Table, e.Column.Width)
}

// quoteStart quotes name, cut to its first 40 characters and "…" when
// longer: the message gives its length itself.
func quoteStart(name string) string {
	n := 0
	for i := range name {
		if n == 40 {
			return strconv.Quote(name[:i] + "…")
		}
		n++
	}
	return strconv.Quote(name)
}

// Is makes errors.Is(err, ErrInvalid) true.
func (e *NameTooLongError) Is(target error) bool { return target == ErrInvalid }

// StoresNamesVerbatim reports whether the table stores every lock name as
// it is: the presets that mirror other applications' tables (shedlock,
// sys_sched_lock) do, and refuse a name their column cannot hold (see
// NameTooLongError). The native table stores a name too long for its
// column as MapName(name, limit).
func (s Schema) StoresNamesVerbatim() bool { return s.Preset != PresetSchedlock }

// ReleaseDeletesRow reports whether a release deletes the lock's row
// instead of ending its lease in it: the sys_sched_lock preset, whose
// applications lock with a plain INSERT (a duplicate key means held) and
// unlock with DELETE … WHERE lock_name = ? AND lock_owner = ?, so a row
// left behind would refuse their INSERT for good. With at-least the row
// stays until locked-at + at-least (see Freed), and an
// administrator's forced unlock deletes it, expired or not.
func (s Schema) ReleaseDeletesRow() bool { return s.Preset == PresetSysSchedLock }

// Name widths the preset tables are created with: ShedLock's README
// declares name VARCHAR(64); sys_sched_lock tables declare lock_name
// VARCHAR(128). An existing table's own width, read from the catalog,
// is the one that counts (NameColumnReader).
const (
	ShedlockNameWidth     = 64
	SysSchedLockNameWidth = 128
)

// PresetNameWidth is the name width a preset table is created with:
// ShedlockNameWidth or SysSchedLockNameWidth, and native for the native
// table, whose width each database sets.
func (s Schema) PresetNameWidth(native int) int {
	switch s.Preset {
	case PresetShedlock:
		return ShedlockNameWidth
	case PresetSysSchedLock:
		return SysSchedLockNameWidth
	}
	return native
}

// UnstorableNameError refuses a lock name that a preset table cannot keep
// apart from another name (SQL Server ignores trailing spaces when it
// compares names): preset tables store names as they are, so such a name
// is refused rather than changed. It matches ErrInvalid.
type UnstorableNameError struct {
	Name  string
	Table string
	Why   string
}

func (e *UnstorableNameError) Error() string {
	return fmt.Sprintf("lock name %s cannot be stored in table %s: %s", elide.Quote(e.Name), e.Table, e.Why)
}

// Is makes errors.Is(err, ErrInvalid) true.
func (e *UnstorableNameError) Is(target error) bool { return target == ErrInvalid }

// CharsetError says a table's column could not store a value's characters
// because its character set lacks them: a multi-byte UTF-8 lock name (or
// owner) written into a latin1 column of a table created without a
// character set (MySQL and MariaDB error 1366, "Incorrect string value").
// Nothing was written. The value cannot be used on that table as it is,
// so it matches ErrInvalid; the operator's fix is to give the column a
// Unicode character set (NameColumn.ExactRemedy on the name column).
type CharsetError struct {
	// Column is the column the server named ("name"), or empty.
	Column string
	// Err is the server's error; Unwrap returns it.
	Err error
}

func (e *CharsetError) Error() string {
	col := "a column of the lock table"
	if e.Column != "" {
		col = "column " + e.Column + " of the lock table"
	}
	return fmt.Sprintf("%s cannot store these characters: its character set lacks them (%v)", col, e.Err)
}

// Unwrap returns the server's error.
func (e *CharsetError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrInvalid) true.
func (e *CharsetError) Is(target error) bool { return target == ErrInvalid }
