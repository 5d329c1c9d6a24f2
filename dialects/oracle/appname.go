package oracle

import (
	"strings"

	"github.com/schedlock/schedlock/dialects"
)

// MaxProgram is the longest PROGRAM sent, in bytes: the server keeps the
// first 48 or 64 bytes, by version, and the option travels inside the
// connect descriptor, which a lock name of any length must not swell.
const MaxProgram = 64

// NameConnections sets go-ora's PROGRAM option, which V$SESSION shows as
// PROGRAM, cut to MaxProgram bytes at a character boundary, unless the
// oracle:// URL conn sets it already. go-ora sends no module name; its
// default program is the executable's base name.
func NameConnections(conn, app string) string {
	if app == "" {
		return conn
	}
	app = dialects.CutAppName(app, MaxProgram)
	return dialects.WithURLParam(conn, "PROGRAM", app, func(k string) bool { return strings.EqualFold(k, "PROGRAM") })
}
