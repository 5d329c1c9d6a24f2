package oracle

import (
	"strings"

	"github.com/schedlock/schedlock/dialects"
)

// NameConnections sets go-ora's PROGRAM option, which V$SESSION shows as
// PROGRAM (the server keeps its first 48 or 64 bytes, by version), unless
// the oracle:// URL conn sets it already. go-ora sends no module name; its
// default program is the executable's base name.
func NameConnections(conn, app string) string {
	if app == "" {
		return conn
	}
	return dialects.WithURLParam(conn, "PROGRAM", app, func(k string) bool { return strings.EqualFold(k, "PROGRAM") })
}
