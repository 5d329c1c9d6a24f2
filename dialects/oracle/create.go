package oracle

import (
	"fmt"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/internal/oralike"
)

// Create creates the table of s unless it exists, with the name column as
// primary key. Oracle before 23ai has no CREATE TABLE IF NOT EXISTS, so
// the statement is an anonymous PL/SQL block that runs the CREATE TABLE
// with EXECUTE IMMEDIATE and ignores ORA-00955 (name already used by an
// existing object); any other error is raised. A DBA can run the block as
// it is (in SQL*Plus, end it with a line holding "/"). The CREATE TABLE
// inside it has no quotes, so it embeds in the string literal unchanged:
//
//   - schedlock (native): name VARCHAR2(255 CHAR), TIMESTAMP(3) times
//     holding UTC, owner VARCHAR2(255 CHAR), token NUMBER(19) DEFAULT 0;
//   - shedlock: ShedLock's table, name VARCHAR2(64 CHAR), TIMESTAMP(3)
//     times;
//   - sys_sched_lock: lock_name VARCHAR2(128 CHAR), TIMESTAMP(3) times.
//
// Lengths are in characters (CHAR), so a name of 64 multi-byte characters
// fits whatever NLS_LENGTH_SEMANTICS says; an existing table declared in
// bytes (VARCHAR2(64), the default semantics) holds fewer multi-byte
// characters, and NameColumn reads its width in bytes.
func (b *Builder) Create(s dialects.Schema) string {
	return oralike.Ignoring(createTable(s), oraNameInUse)
}

// createTable is the plain CREATE TABLE of s. The table name is an
// identifier checked by dialects.Table.Schema, and no part of the
// statement holds a quote.
func createTable(s dialects.Schema) string {
	nameLen := (&Builder{}).MaxNameRunes(s)
	sql := fmt.Sprintf("CREATE TABLE %s (\n"+
		"    %s VARCHAR2(%d CHAR) NOT NULL,\n"+
		"    %s TIMESTAMP(3) NOT NULL,\n"+
		"    %s TIMESTAMP(3) NOT NULL,\n"+
		"    %s VARCHAR2(255 CHAR) NOT NULL,\n",
		s.Table,
		s.NameCol, nameLen,
		s.UntilCol,
		s.LockedAtCol,
		s.OwnerCol)
	if s.TokenCol != "" {
		sql += fmt.Sprintf("    %s NUMBER(19) DEFAULT 0 NOT NULL,\n", s.TokenCol)
	}
	return sql + fmt.Sprintf("    PRIMARY KEY (%s)\n  )", s.NameCol)
}

// Drop drops the table of s, bypassing the recycle bin, and succeeds when
// it does not exist (ORA-00942): a PL/SQL block, because DROP TABLE IF
// EXISTS arrived only in 23ai. The table name is an identifier checked by
// dialects.Table.Schema.
func (b *Builder) Drop(s dialects.Schema) string {
	return oralike.Ignoring("DROP TABLE "+s.Table+" PURGE", oraNoSuchTable)
}
