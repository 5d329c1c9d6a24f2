package postgres

import (
	"errors"
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/xo/dburl"

	"github.com/schedlock/schedlock/dialects"
)

// Schemes are the dburl schemes of the PostgreSQL wire family, with the
// port each product listens on by default.
var Schemes = []dialects.Scheme{
	{Name: "postgres", DefaultPort: "5432"},
	{Name: "pgx", DefaultPort: "5432"},
	{Name: "pq", DefaultPort: "5432"},
	{Name: "cockroachdb", DefaultPort: "26257"},
	// dburl does not know kingbase://: KingbaseES speaks the PostgreSQL
	// wire protocol on port 54321.
	{Name: "kingbase", DefaultPort: "54321", URL: &dburl.Scheme{
		Name:      "kingbase",
		Generator: dburl.GenPgxFromURL("postgres://localhost:54321/"),
		Transport: dburl.TransportUnix,
		Aliases:   []string{"kb", "kingbasees"},
		Dialect:   "kingbase",
		Desc:      "KingbaseES",
		GoPackage: "github.com/jackc/pgx/v5/stdlib",
	}},
}

// ProductTitles are the display names of the products detection reports.
var ProductTitles = map[string]string{
	dialects.ProductPostgreSQL:  "PostgreSQL",
	dialects.ProductKingbase:    "KingbaseES",
	dialects.ProductOpenGauss:   "openGauss",
	dialects.ProductCockroachDB: "CockroachDB",
	dialects.ProductYugabyteDB:  "YugabyteDB",
}

// ConnString is the pgx connection string of u: pq:// names lib/pq, whose
// URL pgx reads as well. A postgres:// URL with the "//" but no host
// (postgres:///jobs, postgres://app@:5433/jobs?host=/tmp) is libpq's own
// form — the database on the default socket, or on the host its query
// names — and goes to pgx as written, which reads it as libpq does
// (dburl would take its path for a socket).
func ConnString(u *dburl.URL) (string, error) {
	if emptyHostURL(u) {
		v := u.URL
		v.Scheme = "postgres"
		return v.String(), nil
	}
	if u.Driver == DriverName {
		return u.DSN, nil
	}
	conn, _, err := dburl.GenPgx(u)
	return conn, err
}

// emptyHostURL reports libpq's URL form with an empty host: the
// authority's "//" written, no host name in it.
func emptyHostURL(u *dburl.URL) bool {
	switch u.SchemeName {
	case "postgres", "pgx", "pq":
		return u.URL.Opaque == "" && !u.URL.OmitHost && u.URL.Hostname() == ""
	}
	return false
}

// Where names the server a postgres:///… connection string reaches: the
// host and port, or the socket directory, pgx resolves; "" for any other
// connection string (its URL says).
func Where(conn string) string {
	if !strings.HasPrefix(conn, "postgres://") {
		return ""
	}
	u, err := url.Parse(conn)
	if err != nil || u.Hostname() != "" {
		return ""
	}
	cfg, err := pgconn.ParseConfig(conn)
	if err != nil {
		return ""
	}
	if strings.HasPrefix(cfg.Host, "/") {
		return cfg.Host
	}
	return net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port)))
}

// sqlStater is implemented by pgx's *pgconn.PgError.
type sqlStater interface{ SQLState() string }

// ConnectHint names the fix of a refused login (SQLSTATE 28P01, 28000) or
// a missing database (3D000).
func ConnectHint(err error) string {
	var state sqlStater
	if !errors.As(err, &state) {
		return ""
	}
	switch state.SQLState() {
	case "28P01", "28000":
		return "check the user name and password"
	case "3D000":
		return "create the database or name another one"
	}
	return ""
}

// applicationNameKV spots application_name in a key=value connection
// string.
var applicationNameKV = regexp.MustCompile(`(^|\s)application_name\s*=`)

// MaxApplicationName is the longest application_name the server keeps,
// in bytes: NAMEDATALEN-1. The server cuts a longer one itself, but it
// first has to arrive: the startup packet that carries it may not exceed
// 10,000 bytes, and a longer one is refused with the connection closed.
const MaxApplicationName = 63

// NameConnections sets application_name, which pg_stat_activity and the
// server log show, unless conn (a URL or libpq key=value string) sets it.
// app is cut to MaxApplicationName bytes at a character boundary (the
// server would keep no more), so a lock name of any length leaves the
// startup packet small; a PGAPPNAME in the environment is overridden, an
// application_name in the DSN is not.
func NameConnections(conn, app string) string {
	if app == "" {
		return conn
	}
	app = dialects.CutAppName(app, MaxApplicationName)
	if strings.Contains(conn, "://") {
		return dialects.WithURLParam(conn, "application_name", app, func(k string) bool { return k == "application_name" })
	}
	if applicationNameKV.MatchString(conn) {
		return conn
	}
	quoted := strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(app)
	return strings.TrimRight(conn, " \t") + " application_name='" + quoted + "'"
}

// CheckConn parses conn as pgx will when it connects (pgconn.ParseConfig:
// the port, sslmode and its certificate files, the libpq options), so a
// value pgx refuses is a bad DSN before any dial. pgconn masks the
// password in its message; the message is cut to what is wrong.
func CheckConn(conn string) error {
	_, err := pgconn.ParseConfig(conn)
	if err == nil {
		return nil
	}
	msg := err.Error()
	if i := strings.LastIndex(msg, "`: "); i >= 0 {
		msg = msg[i+3:]
	}
	return errors.New(msg)
}
