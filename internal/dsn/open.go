package dsn

import (
	"context"
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
	File   bool   // the database is a local file
	Err    error  // the driver's error (its message may hold the DSN)
}

func (e *ConnectError) Error() string {
	verb := "connect to " + e.Family + " at"
	if e.File {
		verb = "open " + e.Family + " file"
	}
	msg := fmt.Sprintf("cannot %s %s: %s", verb, e.Where, e.Reason)
	if e.Hint != "" {
		msg += " — " + e.Hint
	}
	return msg
}

// Unwrap returns the driver's error.
func (e *ConnectError) Unwrap() error { return e.Err }

// OwnWords is the hint: schedlock's words, which a Scrubber leaves as
// written.
func (e *ConnectError) OwnWords() []string {
	if e.Hint == "" {
		return nil
	}
	return []string{" — " + e.Hint}
}

// Dialect returns the registered entry of d's backend. The error matches
// dialects.ErrUnsupported and says which backends this build has.
func (d *DSN) Dialect() (*dialects.Dialect, error) {
	if d.entry != nil {
		return d.entry, nil
	}
	return entryFor(d.Family)
}

// noDialectError says the build lacks the DSN's dialect. It matches
// dialects.ErrUnsupported.
type noDialectError struct{ family string }

func (e *noDialectError) Error() string {
	return fmt.Sprintf("this schedlock has no %s support (compiled in: %s)", e.family, strings.Join(dialects.Names(), ", "))
}

// Is makes errors.Is(err, dialects.ErrUnsupported) true.
func (e *noDialectError) Is(target error) bool { return target == dialects.ErrUnsupported }

// Target is d as a backend's Open takes it. It holds the password.
func (d *DSN) Target() dialects.Target {
	opts := make(map[string]string, len(d.Options))
	for k, v := range d.Options {
		opts[k] = v
	}
	return dialects.Target{Scheme: d.Scheme, Conn: d.conn, Where: d.Where, Path: d.Path, Options: opts}
}

// Connect opens d with its backend and detects the database behind it.
// Errors are scrubbed of the password; a database that cannot be reached
// is a *ConnectError.
func (d *DSN) Connect(ctx context.Context) (dialects.Backend, error) {
	entry, err := d.Dialect()
	if err != nil {
		return nil, err
	}
	if d.IsFile() {
		if err := checkFileDir(d.Path); err != nil {
			return nil, &ConnectError{Family: d.Family, Where: d.Where, Reason: err.Error(), Hint: "create the directory or name another file", File: true, Err: err}
		}
	}
	b, err := entry.Open(ctx, d.Target())
	var unreachable *dialects.UnreachableError
	switch {
	case errors.As(err, &unreachable):
		return nil, d.connectError(entry, unreachable.Err)
	case err != nil:
		return nil, d.Scrub(err)
	}
	return b, nil
}

// checkFileDir reports a missing parent directory up front: the driver's
// own message ("unable to open database file") does not say which.
func checkFileDir(path string) error {
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

// connectError classifies err into one actionable line: the generic
// network causes first, then what the entry knows (ConnectHint,
// MissingDriverHint, Files.Hint).
func (d *DSN) connectError(entry *dialects.Dialect, err error) error {
	if errors.Is(err, context.Canceled) {
		return d.Scrub(err)
	}
	file := entry.Files != nil
	e := &ConnectError{Family: d.Family, Where: d.Where, File: file, Err: err}
	var dnsErr *net.DNSError
	var limit *dialects.ConnLimitError
	msg := err.Error()
	hint := ""
	if entry.ConnectHint != nil {
		hint = entry.ConnectHint(err)
	}
	switch {
	case errors.As(err, &limit):
		e.Reason, e.Hint = connLimitReason(limit), connLimitHint(limit)
	case errors.Is(err, context.DeadlineExceeded):
		e.Reason, e.Hint = "timed out", "is the host reachable? raise --timeout if it is slow"
	case isTimeout(err):
		// The driver's own time-out, which --timeout does not move: the
		// entry's hint names the setting that does, when it knows one.
		e.Reason, e.Hint = "timed out", firstNonEmpty(hint, "is the host reachable? raise --timeout if it is slow")
	case errors.Is(err, syscall.ECONNREFUSED):
		e.Reason, e.Hint = "connection refused", "is the server running?"
	case errors.As(err, &dnsErr):
		e.Reason, e.Hint = fmt.Sprintf("host %q not found", dnsErr.Name), "check the host name"
	case errors.Is(err, syscall.ENOENT) && !file:
		e.Reason, e.Hint = "no such socket", "is the server running, and is the socket path right?"
	case hint != "":
		e.Reason, e.Hint = errorLine(err), hint
	case strings.Contains(msg, "unknown driver") && entry.MissingDriverHint != "":
		e.Reason, e.Hint = fmt.Sprintf("the %s driver is not compiled into this schedlock", entry.Title), entry.MissingDriverHint
	case strings.Contains(msg, "unknown driver"):
		e.Reason, e.Hint = fmt.Sprintf("the %s driver is not compiled into this schedlock", d.entry.Title), ""
	case file:
		e.Reason, e.Hint = errorLine(err), entry.Files.Hint
	default:
		e.Reason = errorLine(err)
	}
	e.Reason = d.scrub.String(e.Reason)
	return d.Scrub(e)
}

// connLimitReason names the limit a refused connection reached: "the
// server's connection limit max_connections is reached".
func connLimitReason(e *dialects.ConnLimitError) string {
	return fmt.Sprintf("the %s's connection limit %s is reached", firstNonEmpty(e.Scope, "server"), e.Limit)
}

// connLimitHint says how to get past the limit: "raise it (ALTER SYSTEM
// SET max_connections …, then restart) or close idle connections".
func connLimitHint(e *dialects.ConnLimitError) string {
	if e.Raise == "" {
		return "raise it or close idle connections"
	}
	raise := strings.ReplaceAll(strings.ReplaceAll(e.Raise, " = <n>", " …"), "<n>", "…")
	if e.Restart {
		raise += ", then restart"
	}
	return "raise it (" + raise + ") or close idle connections"
}

func firstNonEmpty(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
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
