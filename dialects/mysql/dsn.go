package mysql

import (
	"net/url"
	"strings"

	"github.com/xo/dburl"

	"github.com/schedlock/schedlock/dialects"
)

// unsafeInterpolation are the character sets with which go-sql-driver
// refuses client-side interpolation.
var unsafeInterpolation = []string{"big5", "cp932", "gb2312", "gbk", "sjis"}

// DriverParams keeps a DSN's query as written, except:
//   - multiStatements=false is forced: schedlock never sends more than one
//     statement, and a DSN that allowed it would let a crafted value smuggle
//     a second one;
//   - interpolateParams=true is added unless the DSN sets it or names a
//     character set the driver cannot interpolate for: without it every
//     statement with arguments costs three round trips (prepare, execute,
//     close) instead of one.
func DriverParams(query string) string {
	var keep []string
	interpolate := true
	for _, part := range strings.Split(query, "&") {
		key, value, _ := strings.Cut(part, "=")
		switch {
		case part == "" || key == "multiStatements":
			continue
		case key == "interpolateParams":
			interpolate = false
		case key == "charset" || key == "collation":
			for _, cs := range unsafeInterpolation {
				if strings.Contains(strings.ToLower(value), cs) {
					interpolate = false
				}
			}
		}
		keep = append(keep, part)
	}
	keep = append(keep, "multiStatements=false")
	if interpolate {
		keep = append(keep, "interpolateParams=true")
	}
	return strings.Join(keep, "&")
}

// ConnString is go-sql-driver's DSN for u (mysql://, mariadb://, tidb://).
// dburl's own adds parseTime, loc and sql_mode=ansi; this one leaves the
// DSN as the user wrote it.
func ConnString(u *dburl.URL) (string, error) {
	gen := dburl.GenMysql
	if u.SchemeName == "tidb" {
		gen = dburl.GenTiDB
	}
	conn, _, err := gen(u)
	return conn, err
}

// ConnectHint names the fix of a refused login (error 1045) or a missing
// database (1049).
func ConnectHint(err error) string {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "Error 1045"):
		return "check the user name and password"
	case strings.Contains(msg, "Error 1049"):
		return "create the database or name another one"
	}
	return ""
}

// ProgramNameAttribute is the connection attribute that names the client
// program in performance_schema.session_connect_attrs (MySQL's own clients
// set it too).
const ProgramNameAttribute = "program_name"

// MaxProgramName is the longest program_name value sent, in bytes: the
// server keeps the first 1024 bytes of an attribute's value
// (session_connect_attrs.ATTR_VALUE), and a handshake with a much longer
// one is refused (MariaDB 10.11 answers a 70,000-byte program_name with
// error 1043, Bad handshake).
const MaxProgramName = 1024

// NameConnections adds the program_name connection attribute (go-sql-
// driver's connectionAttributes parameter) to the go-sql-driver DSN conn,
// unless conn sets program_name already. The server shows it in
// performance_schema.session_connect_attrs; MariaDB keeps that schema off
// by default, and then the name is sent but not shown. A comma, which
// separates attributes, becomes a space; app is cut to MaxProgramName
// bytes at a character boundary, so a lock name of any length connects.
func NameConnections(conn, app string) string {
	if app == "" {
		return conn
	}
	app = dialects.CutAppName(app, MaxProgramName)
	slash := strings.LastIndexByte(conn, '/')
	if slash < 0 {
		return conn
	}
	head, query, _ := strings.Cut(conn[slash:], "?")
	head = conn[:slash] + head
	attr := ProgramNameAttribute + ":" + strings.ReplaceAll(app, ",", " ")
	var parts []string
	added := false
	for _, part := range strings.Split(query, "&") {
		if part == "" {
			continue
		}
		key, value, _ := strings.Cut(part, "=")
		if key == "connectionAttributes" && !added {
			attrs, err := url.QueryUnescape(value)
			if err != nil {
				return conn // the driver reports the bad value
			}
			for _, a := range strings.Split(attrs, ",") {
				if k, _, _ := strings.Cut(a, ":"); strings.TrimSpace(k) == ProgramNameAttribute {
					return conn
				}
			}
			if attrs != "" {
				attr = attrs + "," + attr
			}
			part, added = "connectionAttributes="+url.QueryEscape(attr), true
		}
		parts = append(parts, part)
	}
	if !added {
		parts = append(parts, "connectionAttributes="+url.QueryEscape(attr))
	}
	return head + "?" + strings.Join(parts, "&")
}
