package sqlserver

// liquibaseGrantedUTC is LOCKGRANTED moved to UTC. Liquibase writes it
// with GETDATE(), the server's local time, into a datetime column; the
// server's current offset from UTC (whole minutes) moves it back (an hour
// off for a lock granted on the other side of a daylight-saving change).
const liquibaseGrantedUTC = "DATEADD(minute, DATEDIFF(minute, GETDATE(), GETUTCDATE()), t.LOCKGRANTED)"

// LiquibaseInspect implements locktable.LiquibaseBuilder: LOCKED (a bit),
// LOCKGRANTED in UTC and the database clock as epoch milliseconds, and
// LOCKEDBY, from the row ID = 1.
func (Builder) LiquibaseInspect(table string) string {
	return "SELECT t.LOCKED, " + epochMs(liquibaseGrantedUTC) + ", t.LOCKEDBY, " + epochMs("SYSUTCDATETIME()") +
		"\nFROM " + table + " AS t\nWHERE t.ID = 1;"
}

// LiquibaseRelease implements locktable.LiquibaseBuilder: LOCKED = @p1
// (false, bound as a bit), LOCKGRANTED and LOCKEDBY NULL, where ID = 1 and
// LOCKED = @p2 (true) and, when guarded, LOCKEDBY = @p3. The driver
// "sqlserver" of go-mssqldb takes @pN placeholders, not the ? of the
// engine's portable form.
func (Builder) LiquibaseRelease(table string, guarded bool) string {
	sql := "UPDATE " + table + " SET LOCKED = @p1, LOCKGRANTED = NULL, LOCKEDBY = NULL WHERE ID = 1 AND LOCKED = @p2"
	if guarded {
		sql += " AND LOCKEDBY = @p3"
	}
	return sql + ";"
}
