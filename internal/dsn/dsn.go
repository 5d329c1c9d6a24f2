// Package dsn turns what a user types after --dsn into what a database/sql
// driver needs, and keeps the password out of everything schedlock shows.
//
// Accepted forms:
//
//	postgres://user:pass@host:5432/db?sslmode=disable   (also postgresql://, pgx://, pq://)
//	kingbase://user:pass@host:54321/db                  (PostgreSQL wire, opened with pgx)
//	cockroachdb://root@host:26257/db                    (PostgreSQL wire, opened with pgx)
//	mysql://user:pass@host:3306/db                      (also mariadb://, tidb://)
//	user:pass@tcp(host:3306)/db                         (go-sql-driver's own form)
//	host=db1 user=app password=… dbname=jobs            (libpq key=value, opened with pgx)
//	sqlite:/path/to/file.db   /path/to/file.db   file.sqlite3
//	oracle://user:pass@host:1521/service
//	sqlserver://user:pass@host:1433/db
//	dm://user:pass@host:5236?schema=S                   (Dameng; driver not compiled in by default)
//
// URLs are parsed by github.com/xo/dburl. Query parameters starting with x-
// are schedlock's own options (x-table, x-preset, x-strategy); they are
// removed before the driver sees the DSN and returned as Options.
//
// Only DSN.Redacted and DSN.String are fit for display: the password is
// replaced by xxxxx. Errors leaving this package are scrubbed of the
// password in every escaping it can take.
package dsn

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/xo/dburl"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/internal/elide"
)

// DSN is a parsed data source name.
type DSN struct {
	// Family is the registry name of the database's backend: postgres,
	// mysql, sqlite, oracle, sqlserver, dameng, …
	Family string
	// Scheme is the dburl scheme name with aliases resolved: postgres, pgx,
	// kingbase, mysql, tidb, sqlite3, …; "mysql" for go-sql-driver's form
	// and "sqlite3" for a bare path.
	Scheme string
	// Where is the address for messages: host:port, a socket, or a file.
	Where string
	// Path is the SQLite file; empty for servers.
	Path string
	// Options are the x- options the DSN carried.
	Options Options

	entry    *dialects.Dialect
	conn     string // what the driver sees; holds the password
	redacted string
	scrub    *Scrubber
}

// String returns the redacted DSN, so %v and %s never show the password.
func (d *DSN) String() string { return d.Redacted() }

// GoString returns the redacted DSN, so %#v never shows the password.
func (d *DSN) GoString() string { return "dsn.DSN(" + d.Redacted() + ")" }

// Redacted returns the DSN as the user gave it with the password replaced
// by xxxxx; for SQLite it is the file path.
func (d *DSN) Redacted() string { return d.redacted }

// ConnString returns the connection string handed to the driver. It holds
// the password: never print, log or embed it.
func (d *DSN) ConnString() string { return d.conn }

// Scrubber returns the scrubber that knows this DSN's password.
func (d *DSN) Scrubber() *Scrubber { return d.scrub }

// Scrub returns err with this DSN's password removed from its message.
func (d *DSN) Scrub(err error) error { return d.scrub.Error(err) }

// MaxBytes is the longest DSN Parse accepts (64 KiB): no real connection
// string comes near it, and a longer one is refused before it is parsed.
const MaxBytes = 64 << 10

// dsnQuoteRunes is how much of a DSN a parse error quotes: its start (the
// scheme and host), leaving room on the line for what is wrong with it.
const dsnQuoteRunes = 32

// Parse parses raw. Every error it returns is scrubbed of the password,
// names the DSN only in redacted form, and quotes at most
// elide.MaxRunes characters of it. A DSN longer than MaxBytes is refused
// before it is parsed.
func Parse(raw string) (*DSN, error) {
	raw = strings.TrimSpace(raw)
	if len(raw) > MaxBytes {
		return nil, fmt.Errorf("invalid DSN: it is %d bytes long, more than the %d (64 KiB) allowed", len(raw), MaxBytes)
	}
	fail := func(err error) (*DSN, error) {
		guess := &Scrubber{}
		guess.AddAll(guessPasswords(raw)...)
		return nil, fmt.Errorf("invalid DSN %s: %w", elide.QuoteN(redactLoose(raw), dsnQuoteRunes), guess.Error(err))
	}
	if raw == "" {
		return fail(errors.New("it is empty"))
	}
	body, opts, err := splitOptions(raw)
	if err != nil {
		return fail(err)
	}
	var d *DSN
	switch {
	case isNativeMySQL(body):
		d, err = parseNativeMySQL(body)
	case isKeyValue(body):
		d, err = parseKeyValue(body)
	case looksLikePath(body):
		d, err = parsePath(body)
	default:
		d, err = parseURL(body)
	}
	if err != nil {
		return fail(err)
	}
	d.Options = opts
	if err := d.checkSessionNames(); err != nil {
		return fail(err)
	}
	d.redacted = redactRaw(raw)
	if d.Path != "" {
		d.redacted = d.Path
	}
	return d, nil
}

// checkConn runs the entry's CheckConn on the driver's connection string.
func checkConn(entry *dialects.Dialect, conn string) error {
	if entry.CheckConn == nil {
		return nil
	}
	return entry.CheckConn(conn)
}

// IsFile reports whether the database is a local file (SQLite).
func (d *DSN) IsFile() bool { return d.entry != nil && d.entry.Files != nil }

func parseNativeMySQL(body string) (*DSN, error) {
	p, ok := splitNativeMySQL(body)
	if !ok {
		return nil, errors.New("not a valid go-sql-driver DSN: write user:password@tcp(host:3306)/dbname")
	}
	entry, err := entryFor(FamilyMySQL)
	if err != nil {
		return nil, err
	}
	if p.net != "unix" {
		if err := checkAddress(p.addr); err != nil {
			return nil, err
		}
	}
	d := &DSN{Family: entry.Name, Scheme: "mysql", Where: p.where(), conn: p.format(entry.DriverQuery), scrub: &Scrubber{}, entry: entry}
	if err := checkConn(entry, d.conn); err != nil {
		return nil, err
	}
	d.scrub.Add(p.pass, p.user, p.dbName(), p.where(), "mysql")
	return d, nil
}

// looksLikePath reports whether s names a file rather than a URL: no
// "scheme:" prefix (a one-letter one is a Windows drive), or "file:".
func looksLikePath(s string) bool {
	if strings.HasPrefix(s, "file:") {
		return true
	}
	if strings.Contains(s, "://") {
		return false
	}
	i := strings.IndexByte(s, ':')
	if i <= 1 {
		return true
	}
	for _, r := range s[:i] {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '+' || r == '-' || r == '.') {
			return true
		}
	}
	return false
}

// parsePath handles a bare path or file:PATH. An extension a file
// database claims (SQLite's .db, .sqlite, …) or an existing regular file
// means that database; an existing directory or socket is a server's
// socket and goes to dburl (postgres and mysql sockets).
func parsePath(body string) (*DSN, error) {
	path, query, _ := strings.Cut(strings.TrimPrefix(body, "file:"), "?")
	if path == "" {
		return nil, errors.New("the file path is empty")
	}
	fi, statErr := os.Stat(path)
	if statErr == nil && (fi.IsDir() || fi.Mode()&os.ModeSocket != 0) {
		return parseURL(body)
	}
	entry, ok := dialects.ForFileExtension(strings.ToLower(filepath.Ext(path)))
	if !ok && statErr == nil && fi.Mode().IsRegular() {
		entry, ok = dialects.FileDialect()
	}
	if ok {
		return newFile(entry, path, query), nil
	}
	ext := strings.ToLower(filepath.Ext(path))
	if b, known := knownByExtension(ext); known {
		if err := notLinked(b, fmt.Sprintf("%q files", ext)); err != nil {
			return nil, err
		}
	}
	if b, known := knownByName("sqlite"); known && statErr == nil && fi.Mode().IsRegular() {
		if err := notLinked(b, "database files"); err != nil {
			return nil, err
		}
	}
	file, exts := "a database file", []string{}
	if d, found := dialects.FileDialect(); found {
		file, exts = "a "+d.Title+" file", d.Files.Extensions
	}
	spelled := "sqlite:" + path
	if len(path) > dsnQuoteRunes {
		spelled = "sqlite:PATH"
	}
	return nil, fmt.Errorf("cannot tell what database %s is: %s needs the extension %s, or write %s; servers take a URL such as postgres://host/db", elide.QuoteN(path, dsnQuoteRunes), file, extensionList(exts), spelled)
}

// extensionList says ".db, .sqlite or .sqlite3".
func extensionList(exts []string) string {
	if len(exts) > 3 {
		exts = exts[:3]
	}
	switch len(exts) {
	case 0:
		return "of a database file"
	case 1:
		return exts[0]
	}
	return strings.Join(exts[:len(exts)-1], ", ") + " or " + exts[len(exts)-1]
}

// newFile opens path with the file database entry, through its Conn (for
// SQLite: modernc.org/sqlite with the busy timeout and WAL settings of
// sqlite.DSN).
func newFile(entry *dialects.Dialect, path, query string) *DSN {
	conn := path
	if query != "" {
		conn += "?" + query
	}
	if entry.Files.Conn != nil {
		conn = entry.Files.Conn(conn)
	}
	scheme := entry.Name
	if len(entry.Schemes) > 0 {
		scheme = entry.Schemes[0].Name
	}
	return &DSN{Family: entry.Name, Scheme: scheme, Where: path, Path: path, conn: conn, scrub: &Scrubber{}, entry: entry}
}

func parseURL(body string) (*DSN, error) {
	written, rest, _ := strings.Cut(body, ":")
	form := strings.ToLower(written) + ":" // how the DSN names its backend: "redis://", "sqlite:"
	if strings.HasPrefix(rest, "//") {
		form += "//"
	}
	u, err := dburl.Parse(body)
	if err != nil {
		// A scheme its backend registers with dburl (redis, etcd, zk, …)
		// is unknown to dburl while that backend is not linked; one that
		// dburl knows for another driver (dynamodb://, whose backend
		// replaces dburl's entry) fails dburl's own rules for it.
		if b, ok := knownByScheme(written); ok {
			if err := notLinked(b, strconv.Quote(form)); err != nil {
				return nil, err
			}
		}
		return nil, explainDburl(body, err)
	}
	entry, scheme, err := dialects.ForScheme(u.SchemeName)
	if err != nil {
		if b, ok := knownByScheme(written, u.SchemeName); ok {
			if err := notLinked(b, strconv.Quote(form)); err != nil {
				return nil, err
			}
		}
		if !errors.Is(err, dialects.ErrUnsupported) {
			return nil, err // two linked backends claim the scheme
		}
		return nil, fmt.Errorf("schedlock does not support %s databases; use %s", u.SchemeName, supportedSchemes())
	}
	if entry.Files != nil {
		return newFile(entry, u.Opaque, u.RawQuery), nil
	}
	d := &DSN{Family: entry.Name, Scheme: u.SchemeName, conn: u.DSN, scrub: &Scrubber{}, entry: entry}
	if u.Transport != "unix" {
		if err := checkHosts(u.Host); err != nil {
			return nil, err
		}
	}
	v := *u
	if entry.DriverQuery != nil {
		v.RawQuery = entry.DriverQuery(u.RawQuery)
	}
	if entry.ConnString != nil {
		if d.conn, err = entry.ConnString(&v); err != nil {
			return nil, err
		}
	}
	if err := checkConn(entry, d.conn); err != nil {
		return nil, err
	}
	d.Where = where(u, scheme.DefaultPort)
	if entry.Where != nil {
		if w := entry.Where(d.conn); w != "" {
			d.Where = w
		}
	}
	family := entry.Name
	user, pass := "", ""
	if u.User != nil {
		user = u.User.Username()
		pass, _ = u.User.Password()
	}
	public := []string{user, strings.TrimPrefix(u.Path, "/"), u.Hostname(), u.OriginalScheme, u.SchemeName, family}
	d.scrub.Add(pass, public...)
	for _, p := range queryPasswords(u.RawQuery) {
		d.scrub.Add(p, public...)
	}
	return d, nil
}

// where returns host:port with the scheme's default port, or the socket.
func where(u *dburl.URL, defaultPort string) string {
	if u.Transport == "unix" {
		if h := u.Query().Get("host"); h != "" {
			return h
		}
		return u.Path
	}
	if strings.Contains(u.Host, ",") {
		return u.Host // a list of hosts (an ensemble, a cluster), each with its port
	}
	host, port := u.Hostname(), u.Port()
	if host == "" {
		host = "localhost"
	}
	if port == "" {
		port = defaultPort
	}
	if port == "" {
		return host
	}
	return net.JoinHostPort(host, port)
}

// explainDburl turns a dburl parse error into one that says what to write.
func explainDburl(body string, err error) error {
	scheme, _, _ := strings.Cut(body, ":")
	var ue *url.Error
	switch {
	case errors.Is(err, dburl.ErrUnknownDatabaseScheme):
		return fmt.Errorf("unknown scheme %s: use %s", elide.QuoteN(scheme, 16), supportedSchemes())
	case errors.Is(err, dburl.ErrInvalidDatabaseScheme):
		return fmt.Errorf("no scheme: use %s", supportedSchemes())
	case errors.As(err, &ue):
		return ue.Err // url.Error repeats the whole input, password included
	}
	return err
}

// passwordKeys are query parameters that carry a password in some driver.
var passwordKeys = []string{"password", "pass", "pwd", "passwd", "sslpassword"}

func queryPasswords(rawQuery string) []string {
	var out []string
	for _, part := range strings.Split(rawQuery, "&") {
		key, value, _ := strings.Cut(part, "=")
		if isPasswordKey(key) && value != "" {
			out = append(out, value)
		}
	}
	return out
}

func isPasswordKey(key string) bool {
	k, err := url.QueryUnescape(key)
	if err != nil {
		k = key
	}
	for _, p := range passwordKeys {
		if strings.EqualFold(k, p) {
			return true
		}
	}
	return false
}

// checkSessionNames refuses x-session-names and x-session-key that the
// DSN's backend cannot take (SQLite and the lease stores have no raw
// session names; MySQL no key derivation), before anything is opened.
func (d *DSN) checkSessionNames() error {
	names := d.Options.SessionNames()
	if names == (dialects.SessionNames{}) {
		return nil
	}
	entry, err := d.Dialect()
	if err != nil {
		return nil // connecting says the backend is missing
	}
	if err := dialects.CheckSessionNames(entry, names, nil); err != nil {
		return fmt.Errorf("option x-session-names/x-session-key: %w", err)
	}
	return nil
}
