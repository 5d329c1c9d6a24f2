package locktable

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/schedlock/schedlock/dialects"
)

// NameColumnBuilder is implemented by a Builder that reads a table's name
// column from the database's catalog. NameColumn is a query without
// parameters that returns one row — the width (0 when the type declares
// none), the unit it counts (a dialects.NameUnit* value), the collation
// (” when the database reports none) and the declared type — or no row
// when the table or the column does not exist (or an error IsMissingTable
// recognises). It resolves the table name as the lease statements do
// (search path, current schema).
//
// Preset tables (dialects.Schema.StoresNamesVerbatim) are read with it
// once per Locker, before the first statement that names a lock, and a
// name their column cannot hold is refused with a
// *dialects.NameTooLongError.
type NameColumnBuilder interface {
	NameColumn(s dialects.Schema) string
}

// ExactRemedyBuilder is optionally implemented by a Builder that can say
// how an operator makes the name column of s compare names exactly (case,
// accents and trailing spaces kept apart): an ALTER TABLE for col.
type ExactRemedyBuilder interface {
	ExactRemedy(s dialects.Schema, col dialects.NameColumn) string
}

// VerbatimNameChecker is optionally implemented by a Builder whose
// database cannot keep some names apart as they are (SQL Server ignores
// trailing spaces in comparisons). On a preset table, which stores names
// as they are, a name for which CheckVerbatimName returns a reason is
// refused with a *dialects.UnstorableNameError.
type VerbatimNameChecker interface {
	CheckVerbatimName(name string) (why string)
}

var _ dialects.NameColumnReader = (*Locker)(nil)

// nameColumnState is what the Locker knows of its name column.
type nameColumnState struct {
	col   dialects.NameColumn
	found bool
}

// NameColumn reads the table's name column from the catalog, once: later
// calls return what the first successful read found. found is false when
// the table is missing (that is not kept, so a table created later is
// read then) and when the Builder cannot read the catalog.
func (l *Locker) NameColumn(ctx context.Context) (dialects.NameColumn, bool, error) {
	ncb, ok := l.b.(NameColumnBuilder)
	if !ok {
		return dialects.NameColumn{}, false, nil
	}
	l.nameColMu.Lock()
	defer l.nameColMu.Unlock()
	if l.nameCol.found {
		return l.nameCol.col, true, nil
	}
	var (
		width               sql.NullInt64
		unit, coll, colType sql.NullString
	)
	err := l.retrying(ctx, func() error {
		l.sent[opNameColumn].Add(1)
		return l.db.QueryRowContext(ctx, ncb.NameColumn(l.schema)).Scan(&width, &unit, &coll, &colType)
	})
	if errors.Is(err, sql.ErrNoRows) || (err != nil && l.b.IsMissingTable(err)) {
		// The statement that follows reports the missing table.
		return dialects.NameColumn{}, false, nil
	}
	if err != nil {
		return dialects.NameColumn{}, false, dialects.Wrap(l.b.Dialect(), "read name column", l.classify(fmt.Errorf("read the name column from the catalog: %w", err)))
	}
	col := dialects.NameColumn{Column: l.schema.NameCol, Type: colType.String, Width: int(max(width.Int64, 0)), Unit: unit.String, Collation: coll.String}
	if col.Unit == "" {
		col.Unit = dialects.NameUnitCharacters
	}
	if er, ok := l.b.(ExactRemedyBuilder); ok {
		col.ExactRemedy = er.ExactRemedy(l.schema, col)
	}
	if err := l.readUntilPrecision(ctx); err != nil {
		return dialects.NameColumn{}, false, err
	}
	l.nameCol = nameColumnState{col: col, found: true}
	return col, true, nil
}

// checkName refuses a name the lock table cannot store: bad input
// (dialects.CheckName), and on a preset table, which stores names as they
// are, a name longer than its name column (*dialects.NameTooLongError). It
// sends at most one catalog query per Locker.
func (l *Locker) checkName(ctx context.Context, name string) error {
	if err := dialects.CheckName(name); err != nil {
		return err
	}
	if !l.schema.StoresNamesVerbatim() {
		return nil
	}
	if vc, ok := l.b.(VerbatimNameChecker); ok {
		if why := vc.CheckVerbatimName(name); why != "" {
			return &dialects.UnstorableNameError{Name: name, Table: l.schema.Table, Why: why}
		}
	}
	col, found, err := l.NameColumn(ctx)
	if err != nil || !found || col.Fits(name) {
		return err
	}
	return &dialects.NameTooLongError{Name: name, Table: l.schema.Table, Column: col}
}
