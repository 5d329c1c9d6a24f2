package sqlserver

import (
	"strings"

	"github.com/schedlock/schedlock/dialects"
)

// NameConnections sets go-mssqldb's "app name", which sys.dm_exec_sessions
// shows as program_name, unless the sqlserver:// URL conn names it already
// ("app name" in any case: the driver's only key for it in a URL).
func NameConnections(conn, app string) string {
	if app == "" {
		return conn
	}
	return dialects.WithURLParam(conn, "app name", app, func(k string) bool { return strings.EqualFold(k, "app name") })
}
