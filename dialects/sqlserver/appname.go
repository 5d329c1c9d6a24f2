package sqlserver

import (
	"strings"
	"unicode/utf16"

	"github.com/schedlock/schedlock/dialects"
)

// MaxAppName is the longest app name sent, in UTF-16 code units: the
// LOGIN7 message carries at most 128 characters for it (MS-TDS), and
// go-mssqldb writes the message's offsets as 16-bit numbers, which a
// longer name would overflow.
const MaxAppName = 128

// NameConnections sets go-mssqldb's "app name", which sys.dm_exec_sessions
// shows as program_name, unless the sqlserver:// URL conn names it already
// ("app name" in any case: the driver's only key for it in a URL). app is
// cut to MaxAppName UTF-16 code units at a character boundary.
func NameConnections(conn, app string) string {
	if app == "" {
		return conn
	}
	app = cutUTF16(app, MaxAppName)
	return dialects.WithURLParam(conn, "app name", app, func(k string) bool { return strings.EqualFold(k, "app name") })
}

// cutUTF16 is s cut to at most max UTF-16 code units, at a character
// boundary (a character above U+FFFF takes two).
func cutUTF16(s string, max int) string {
	units := 0
	for i, r := range s {
		n := utf16.RuneLen(r)
		if n < 1 {
			n = 1
		}
		if units+n > max {
			return s[:i]
		}
		units += n
	}
	return s
}
