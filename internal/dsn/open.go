package dsn

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/schedlock/schedlock/dialects"
)

// ConnectError is a failed connection, said in one line with what to check:
// "cannot connect to postgres at 127.0.0.1:5439: connection refused — is
// the server running?". It unwraps to the driver's error.
type ConnectError struct {
	Family string // postgres, mysql, sqlite, …
	Where  string // host:port, socket or file
	Reason string // what went wrong, scrubbed
	Hint   string // what to check; may be empty
	Err    error  // the driver's error (its message may hold the DSN)
}

func (e *ConnectError) Error() string {
	verb := "connect to " + e.Family + " at"
	if e.Family == FamilySQLite {
		verb = "open sqlite file"
	}
	msg := fmt.Sprintf("cannot %s %s: %s", verb, e.Where, e.Reason)
	if e.Hint != "" {
		msg += " — " + e.Hint
	}
	return msg
}

// Unwrap returns the driver's error.
func (e *ConnectError) Unwrap() error { return e.Err }

// Dialect returns the registered dialect for d: the one claiming its dburl
// scheme, else the one named after its family. The error matches
// dialects.ErrUnsupported and says which dialects this build has.
func (d *DSN) Dialect() (*dialects.Dialect, error) {
	if dl, err := dialects.ForScheme(d.Scheme); err == nil {
		return dl, nil
	}
	if dl, ok := dialects.Lookup(d.Family); ok {
		return dl, nil
	}
	return nil, &noDialectError{family: d.Family}
}

// noDialectError says the build lacks the DSN's dialect. It matches
// dialects.ErrUnsupported.
type noDialectError struct{ family string }

func (e *noDialectError) Error() string {
	return fmt.Sprintf("this schedlock has no %s support (compiled in: %s)", e.family, strings.Join(dialects.Names(), ", "))
}

// Is makes errors.Is(err, dialects.ErrUnsupported) true.
func (e *noDialectError) Is(target error) bool { return target == dialects.ErrUnsupported }

// Open opens d with its dialect's driver and pings it within ctx. Errors
// are *ConnectError (or the context's error) with the password scrubbed.
func (d *DSN) Open(ctx context.Context) (*sql.DB, error) {
	dl, err := d.Dialect()
	if err != nil {
		return nil, err
	}
	driver := d.Driver
	if dl.Driver != "" {
		driver = dl.Driver
	}
	if d.Family == FamilySQLite {
		if err := checkSQLiteDir(d.Path); err != nil {
			return nil, &ConnectError{Family: d.Family, Where: d.Where, Reason: err.Error(), Hint: "create the directory or name another file", Err: err}
		}
	}
	db, err := sql.Open(driver, d.conn)
	if err != nil {
		return nil, d.connectError(err)
	}
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		if ctxErr := ctx.Err(); ctxErr != nil && !errors.Is(err, ctxErr) {
			err = fmt.Errorf("%w (%v)", ctxErr, err)
		}
		return nil, d.connectError(err)
	}
	return db, nil
}

// Connect opens d and detects the database behind it. Errors are scrubbed
// of the password.
func (d *DSN) Connect(ctx context.Context) (*dialects.DB, error) {
	dl, err := d.Dialect()
	if err != nil {
		return nil, err
	}
	db, err := d.Open(ctx)
	if err != nil {
		return nil, err
	}
	detected, err := dialects.Open(ctx, db, dl.Name)
	if err != nil {
		_ = db.Close()
		return nil, d.Scrub(err)
	}
	return detected, nil
}

// checkSQLiteDir reports a missing parent directory up front: the driver's
// own message ("unable to open database file") does not say which.
func checkSQLiteDir(path string) error {
	if path == "" || strings.HasPrefix(path, ":memory:") || strings.HasPrefix(path, "file:") {
		return nil
	}
	dir := filepath.Dir(path)
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("directory %s does not exist: %w", dir, os.ErrNotExist)
	case err != nil:
		return fmt.Errorf("directory %s: %w", dir, err)
	case !fi.IsDir():
		return fmt.Errorf("%s is not a directory", dir)
	}
	return nil
}

// sqlStater is implemented by pgx's *pgconn.PgError.
type sqlStater interface{ SQLState() string }

// connectError classifies err into one actionable line.
func (d *DSN) connectError(err error) error {
	if errors.Is(err, context.Canceled) {
		return d.Scrub(err)
	}
	e := &ConnectError{Family: d.Family, Where: d.Where, Err: err}
	var dnsErr *net.DNSError
	var state sqlStater
	msg := err.Error()
	switch {
	case errors.Is(err, context.DeadlineExceeded) || isTimeout(err):
		e.Reason, e.Hint = "timed out", "is the host reachable? raise --timeout if it is slow"
	case errors.Is(err, syscall.ECONNREFUSED):
		e.Reason, e.Hint = "connection refused", "is the server running?"
	case errors.As(err, &dnsErr):
		e.Reason, e.Hint = fmt.Sprintf("host %q not found", dnsErr.Name), "check the host name"
	case errors.Is(err, syscall.ENOENT) && d.Family != FamilySQLite:
		e.Reason, e.Hint = "no such socket", "is the server running, and is the socket path right?"
	case errors.As(err, &state) && (state.SQLState() == "28P01" || state.SQLState() == "28000"):
		e.Reason, e.Hint = errorLine(err), "check the user name and password"
	case errors.As(err, &state) && state.SQLState() == "3D000":
		e.Reason, e.Hint = errorLine(err), "create the database or name another one"
	case strings.Contains(msg, "Error 1045"):
		e.Reason, e.Hint = errorLine(err), "check the user name and password"
	case strings.Contains(msg, "Error 1049"):
		e.Reason, e.Hint = errorLine(err), "create the database or name another one"
	case strings.Contains(msg, "unknown driver") && d.Driver == "dm":
		e.Reason, e.Hint = "the Dameng driver is not compiled into this schedlock", "rebuild with -tags dameng after `go get gitee.com/chunanyong/dm` (see docs/dialects/dameng.md)"
	case strings.Contains(msg, "unknown driver"):
		e.Reason, e.Hint = fmt.Sprintf("the %s driver is not compiled into this schedlock", d.Driver), ""
	case d.Family == FamilySQLite:
		e.Reason, e.Hint = errorLine(err), "is the file a SQLite database, and is its directory writable?"
	default:
		e.Reason = errorLine(err)
	}
	e.Reason = d.scrub.String(e.Reason)
	return d.Scrub(e)
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// errorLine is the innermost useful message: the server's own error when
// there is one (pgx prefixes it with the whole connection config), all on
// one line.
func errorLine(err error) string {
	var state sqlStater
	if errors.As(err, &state) {
		if e, ok := state.(error); ok {
			err = e
		}
	}
	return strings.Join(strings.Fields(err.Error()), " ")
}
