// Package oralike holds the code the Oracle and Dameng dialects share
// beyond DBMS_LOCK (package dbmslock): Dameng DM8 imitates Oracle's
// dictionary views, its GRANTs and its claim SQL, so what reads or writes
// them alike is written once here, parameterised by what differs (the
// statement, the privilege, the words of a message). The SQL text of each
// database stays in its own package.
package oralike

import (
	"regexp"
	"strconv"
	"strings"
)

// plainUser is a user name the database stores as written without quotes:
// an upper-case identifier.
var plainUser = regexp.MustCompile(`^[A-Z][A-Z0-9_$#]*$`)

// QuoteUser renders user for a GRANT: as is when it is a plain upper-case
// identifier (how Oracle and Dameng store unquoted names), double-quoted
// otherwise, and "<user>" when unknown.
func QuoteUser(user string) string {
	switch {
	case user == "":
		return "<user>"
	case plainUser.MatchString(user):
		return user
	default:
		return `"` + strings.ReplaceAll(user, `"`, `""`) + `"`
	}
}

// OneLine is err's message on one line, runs of white space collapsed, and
// without the stack trace Dameng's driver appends to its text
// ("…\nstack info:\n…"); "" for nil.
func OneLine(err error) string {
	if err == nil {
		return ""
	}
	msg, _, _ := strings.Cut(err.Error(), "\nstack info:")
	return strings.Join(strings.Fields(msg), " ")
}

// Ignoring is the anonymous block (PL/SQL on Oracle, DMSQL on Dameng)
// that runs the quote-free statement ddl and succeeds when it fails with
// the error sqlcode (given positive: 955 for ORA-00955, 2106 for Dameng's
// -2106), re-raising any other error: how a CREATE or DROP is made to
// tolerate an object that exists or is missing on releases without IF
// [NOT] EXISTS.
func Ignoring(ddl string, sqlcode int) string {
	return "BEGIN\n" +
		"  EXECUTE IMMEDIATE '" + ddl + "';\n" +
		"EXCEPTION\n" +
		"  WHEN OTHERS THEN\n" +
		"    IF SQLCODE != -" + strconv.Itoa(sqlcode) + " THEN\n" +
		"      RAISE;\n" +
		"    END IF;\n" +
		"END;"
}
