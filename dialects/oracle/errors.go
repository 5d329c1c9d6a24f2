package oracle

import (
	"context"
	"database/sql"
	"errors"
	"strings"

	"github.com/sijms/go-ora/v2/network"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/internal/oralike"
)

// Oracle error numbers (ORA-nnnnn) this dialect acts on.
const (
	oraUniqueViolated     = 1     // ORA-00001: unique constraint violated
	oraSessionKilled      = 28    // ORA-00028: your session has been killed
	oraNoSuchSession      = 30    // ORA-00030: user session ID does not exist
	oraMarkedForKill      = 31    // ORA-00031: session marked for kill
	oraInvalidSessionID   = 26    // ORA-00026: missing or invalid session ID
	oraKillOwnSession     = 27    // ORA-00027: cannot kill current session
	oraNameInUse          = 955   // ORA-00955: name is already used by an existing object
	oraNoSuchTable        = 942   // ORA-00942: table or view does not exist
	oraNoSuchSequence     = 2289  // ORA-02289: sequence does not exist
	oraInsufficientPrivs  = 1031  // ORA-01031: insufficient privileges
	oraPLSQLCompileFailed = 6550  // ORA-06550: line n, column n: (PLS-… follows)
	oraValueTooLarge      = 12899 // ORA-12899: value too large for column
)

// oraCode returns the ORA number of the go-ora error in err's chain, or 0.
func oraCode(err error) int {
	var oe *network.OracleError
	if errors.As(err, &oe) {
		return oe.ErrCode
	}
	return 0
}

// oraMessage returns the server's message of the go-ora error in err's
// chain ("ORA-06550: line 1, column 7:\nPLS-00201: …"), or "".
func oraMessage(err error) string {
	var oe *network.OracleError
	if errors.As(err, &oe) {
		return oe.ErrMsg
	}
	return ""
}

// IsDuplicateKey reports ORA-00001, unique constraint violated.
func IsDuplicateKey(err error) bool { return oraCode(err) == oraUniqueViolated }

// missingDBMSLock reports whether err is a PL/SQL compile error because
// SYS.DBMS_LOCK cannot be seen: ORA-06550 with PLS-00201 ("identifier
// 'SYS.DBMS_LOCK' must be declared", no EXECUTE grant) or PLS-00904
// ("insufficient privilege to access object SYS.DBMS_LOCK").
func missingDBMSLock(err error) bool {
	if oraCode(err) != oraPLSQLCompileFailed {
		return false
	}
	msg := strings.ToUpper(oraMessage(err))
	return strings.Contains(msg, "DBMS_LOCK") && (strings.Contains(msg, "PLS-00201") || strings.Contains(msg, "PLS-00904"))
}

// privilegeDBMSLock is the *dialects.PrivilegeError for a user who may not
// execute SYS.DBMS_LOCK.
func privilegeDBMSLock(user string, cause error) *dialects.PrivilegeError {
	return &dialects.PrivilegeError{
		Privilege: "EXECUTE ON SYS.DBMS_LOCK",
		Grant:     grantExecute(user),
		Err:       cause,
	}
}

// grantExecute is the statement that lets user run DBMS_LOCK.
func grantExecute(user string) string {
	return "GRANT EXECUTE ON SYS.DBMS_LOCK TO " + oralike.QuoteUser(user)
}

// currentUserSQL reads the session's user for the GRANT in a
// PrivilegeError.
const currentUserSQL = "SELECT SYS_CONTEXT('USERENV', 'SESSION_USER') FROM dual"

// queryer is what both *sql.DB and *sql.Conn offer.
type queryer interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// sessionUser returns the session user of q, or "" when it cannot be read.
func sessionUser(ctx context.Context, q queryer) string {
	var user sql.NullString
	if err := q.QueryRowContext(ctx, currentUserSQL).Scan(&user); err != nil {
		return ""
	}
	return user.String
}
