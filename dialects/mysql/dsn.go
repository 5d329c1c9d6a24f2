package mysql

import (
	"strings"

	"github.com/xo/dburl"
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
