package dsn

// NameConnections names d's connections app in the server's own session
// views (pg_stat_activity.application_name, the program_name connection
// attribute of MySQL/MariaDB, …) through its backend's registry entry; see
// dialects.Dialect.NameConnections. A name the DSN sets already wins, and
// a backend whose connections carry no name (SQLite) ignores it.
func (d *DSN) NameConnections(app string) {
	if d.entry == nil || d.entry.NameConnections == nil || app == "" {
		return
	}
	d.conn = d.entry.NameConnections(d.conn, app)
}
