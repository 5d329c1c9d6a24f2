package postgres

import (
	"errors"
	"regexp"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/locktable"
)

// AuthMethodError says the server asked for a password method that pgx
// does not implement: openGauss and GaussDB answer a login with their own
// authentication request codes — 10 for SHA256 (which pgx reads as SASL),
// 11 for MD5_SHA256, 13 for SM3 — where PostgreSQL uses SCRAM or MD5. It
// unwraps to pgx's connect error.
type AuthMethodError struct {
	// Code is the authentication request code when pgx named it (13), or
	// the one its error implies (10, 11).
	Code int
	Err  error
}

func (e *AuthMethodError) Error() string {
	method := map[int]string{10: "SHA256", 11: "MD5_SHA256", 13: "SM3"}[e.Code]
	if method == "" {
		method = "code " + strconv.Itoa(e.Code)
	}
	return "the server asked for the " + method + " password method (openGauss/GaussDB authentication code " + strconv.Itoa(e.Code) +
		"), which the pgx driver cannot answer: on the server set password_encryption_type = 1, give this client md5 in pg_hba.conf" +
		" and set the user's password again (so an MD5 hash is stored), or connect as a user with an MD5 password"
}

// Unwrap returns pgx's error.
func (e *AuthMethodError) Unwrap() error { return e.Err }

var unknownAuthRE = regexp.MustCompile(`unknown authentication type: (\d+)`)

// explainAuthError turns pgx's failure to log in to an openGauss-style
// server into an *AuthMethodError; other errors pass unchanged. pgx reports
// code 10 as a malformed or SCRAM-less SASL request, code 11 as an
// unexpected message during the handshake, and code 13 (or any other it
// does not know) as an unknown authentication type.
func explainAuthError(err error) error {
	var ce *pgconn.ConnectError
	if err == nil || !errors.As(err, &ce) {
		return err
	}
	msg := ce.Error()
	switch {
	case strings.Contains(msg, "AuthenticationSASL body is invalid"),
		strings.Contains(msg, "server does not support SCRAM-SHA-256"):
		return &AuthMethodError{Code: 10, Err: err}
	case strings.Contains(msg, "received unexpected message"):
		return &AuthMethodError{Code: 11, Err: err}
	}
	if m := unknownAuthRE.FindStringSubmatch(msg); m != nil {
		code, _ := strconv.Atoi(m[1])
		return &AuthMethodError{Code: code, Err: err}
	}
	return err
}

// OpenGaussBuilder writes the lease-table SQL for openGauss: Builder's
// statements, except that Acquire uses openGauss's INSERT … ON DUPLICATE
// KEY UPDATE … WHERE instead of ON CONFLICT, which openGauss (based on
// PostgreSQL 9.2) does not have. Acquire reports its outcome by rows
// affected (0 when the live row was left alone), so it does not rely on
// RETURNING together with ON DUPLICATE KEY UPDATE, which not every
// openGauss release allows; the engine reads the new token back with
// Inspect.
type OpenGaussBuilder struct{ Builder }

var (
	_ locktable.Builder        = OpenGaussBuilder{}
	_ locktable.DuplicateKeyer = OpenGaussBuilder{}
	_ locktable.Retrier        = OpenGaussBuilder{}
)

// Acquire inserts the row, or takes over an expired one: ON DUPLICATE KEY
// UPDATE sets owner, locked_at, until and token + 1 only WHERE the stored
// until <= now. Unqualified columns in the update name the stored row,
// EXCLUDED the proposed one.
func (OpenGaussBuilder) Acquire(s dialects.Schema) locktable.Stmt {
	z := zone(s)
	cols := []string{s.NameCol, s.OwnerCol, s.LockedAtCol, s.UntilCol}
	vals := []string{"$1::text", "$2::text", z.ToLocal("n.now"), z.ToLocal("n.now + $3::bigint * interval '1 millisecond'")}
	sets := []string{
		s.OwnerCol + " = EXCLUDED." + s.OwnerCol,
		s.LockedAtCol + " = EXCLUDED." + s.LockedAtCol,
		s.UntilCol + " = EXCLUDED." + s.UntilCol,
	}
	if s.TokenCol != "" {
		cols = append(cols, s.TokenCol)
		vals = append(vals, "1")
		sets = append(sets, s.TokenCol+" = "+s.TokenCol+" + 1")
	}
	sql := "INSERT INTO " + s.Table + " (" + strings.Join(cols, ", ") + ")\n" +
		"SELECT " + strings.Join(vals, ", ") + "\n" +
		"FROM (SELECT " + now + " AS now) AS n\n" +
		"ON DUPLICATE KEY UPDATE " + strings.Join(sets, ", ") + "\n" +
		"WHERE " + z.ToUTC(s.UntilCol) + " <= " + now
	return locktable.Stmt{
		SQL:    sql,
		Args:   []locktable.Arg{locktable.ArgName, locktable.ArgOwner, locktable.ArgAtMostMs},
		Result: locktable.ResultRowsAffected,
	}
}

// IsDuplicateKey reports SQLSTATE 23505: a concurrent insert of the same
// new name won, so the lock is held.
func (OpenGaussBuilder) IsDuplicateKey(err error) bool { return hasCode(err, codeUniqueViolation) }

// NewBuilder returns the lease-table Builder for info's product:
// OpenGaussBuilder on openGauss, Builder everywhere else.
func NewBuilder(info dialects.Info) locktable.Builder {
	if info.Product == dialects.ProductOpenGauss {
		return OpenGaussBuilder{}
	}
	return Builder{}
}
