package locktable

import (
	"context"
	"database/sql"

	"github.com/schedlock/schedlock/dialects"
)

var _ dialects.ColumnReader = (*Locker)(nil)

// Columns reads the names of the lock table's columns, as the database
// spells them, with SELECT * FROM <table> WHERE 1 = 0: it resolves the table
// name exactly as the Locker's statements do (search path, current schema)
// and reads no row. A missing table gives a *dialects.MissingTableError.
func (l *Locker) Columns(ctx context.Context) ([]string, error) {
	cols, err := tableColumns(ctx, l.db, l.schema.Table)
	if err != nil {
		return nil, dialects.Wrap(l.b.Dialect(), "columns", l.classify(err))
	}
	return cols, nil
}

// tableColumns returns the column names of table without reading a row.
func tableColumns(ctx context.Context, db *sql.DB, table string) ([]string, error) {
	rows, err := db.QueryContext(ctx, "SELECT * FROM "+table+" WHERE 1 = 0")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	return cols, rows.Close()
}
