package oralike

import (
	"strings"

	"github.com/schedlock/schedlock/dialects"
)

// NameColumnFrom is the FROM and WHERE of a read of s's name column in
// ALL_TAB_COLUMNS (Oracle's view, which Dameng imitates): in the table's
// schema or, for an unqualified name, the session's current schema, names
// in upper case as unquoted identifiers are stored. The identifiers are
// checked by dialects.Table.Schema, so they hold no quote.
func NameColumnFrom(s dialects.Schema) string {
	owner, table := "SYS_CONTEXT('USERENV', 'CURRENT_SCHEMA')", s.Table
	if i := strings.IndexByte(s.Table, '.'); i >= 0 {
		owner, table = "'"+strings.ToUpper(s.Table[:i])+"'", s.Table[i+1:]
	}
	return " FROM ALL_TAB_COLUMNS" +
		" WHERE OWNER = " + owner + " AND TABLE_NAME = '" + strings.ToUpper(table) + "' AND COLUMN_NAME = '" + strings.ToUpper(s.NameCol) + "'"
}
