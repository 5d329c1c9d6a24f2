package oracle

// liquibaseGrantedUTC is LOCKGRANTED moved to UTC. Liquibase writes it
// with SYSTIMESTAMP into a TIMESTAMP (DATE before Liquibase 3) column,
// which keeps the wall-clock time of the database host's time zone and
// drops the zone; FROM_TZ puts back the zone SYSTIMESTAMP has now (an
// hour off for a lock granted on the other side of a daylight-saving
// change).
const liquibaseGrantedUTC = "SYS_EXTRACT_UTC(FROM_TZ(CAST(LOCKGRANTED AS TIMESTAMP), TO_CHAR(SYSTIMESTAMP, 'TZH:TZM')))"

// LiquibaseInspect implements locktable.LiquibaseBuilder: LOCKED (a
// NUMBER(1)), LOCKGRANTED in UTC and the database clock as epoch
// milliseconds, and LOCKEDBY, from the row ID = 1.
func (b *Builder) LiquibaseInspect(table string) string {
	return "SELECT LOCKED, " + epochMs(liquibaseGrantedUTC) + ", LOCKEDBY, " + epochMs(sqlNow) + " FROM " + table + " WHERE ID = 1"
}

// LiquibaseRelease implements locktable.LiquibaseBuilder: LOCKED = :1
// (false, which go-ora binds as the NUMBER 0), LOCKGRANTED and LOCKEDBY
// NULL, where ID = 1 and LOCKED = :2 (true, bound as 1) and, when guarded,
// LOCKEDBY = :3.
func (b *Builder) LiquibaseRelease(table string, guarded bool) string {
	sql := "UPDATE " + table + " SET LOCKED = :1, LOCKGRANTED = NULL, LOCKEDBY = NULL WHERE ID = 1 AND LOCKED = :2"
	if guarded {
		sql += " AND LOCKEDBY = :3"
	}
	return sql
}
