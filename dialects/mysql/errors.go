package mysql

import (
	"errors"
	"regexp"
	"strings"

	"github.com/go-sql-driver/mysql"

	"github.com/schedlock/schedlock/dialects"
)

// Server error numbers of refused connections.
const (
	errConCount          = 1040 // ER_CON_COUNT_ERROR: "Too many connections"
	errTooManyUserConns  = 1203 // ER_TOO_MANY_USER_CONNECTIONS: the global max_user_connections
	errUserLimitReached  = 1226 // ER_USER_LIMIT_REACHED: an account's resource limit
	userResourceMaxConns = "max_user_connections"
	userResourcePerHour  = "max_connections_per_hour"
	// errTruncatedWrongValue is ER_TRUNCATED_WRONG_VALUE_FOR_FIELD,
	// "Incorrect string value: '\xE6\x97…' for column `db`.`t`.`name` at
	// row 1": a column whose character set (latin1) lacks the characters.
	errTruncatedWrongValue = 1366
)

// columnRE reads the column of ER_TRUNCATED_WRONG_VALUE_FOR_FIELD: its last
// back-quoted part (MariaDB: `db`.`t`.`name`) or its quoted name (MySQL:
// 'name').
var columnRE = regexp.MustCompile("for column (?:`[^`]*`\\.)*[`']([^`']*)[`'] at row")

// userLimitRE reads ER_USER_LIMIT_REACHED: "User 'app' has exceeded the
// 'max_user_connections' resource (current value: 1)".
var userLimitRE = regexp.MustCompile(`^User '(.*)' has exceeded the '([a-z_]+)' resource`)

// ClassifyError returns a *dialects.ConnLimitError for a server that
// refused a connection because a connection limit was reached:
//
//   - 1040 (Too many connections): max_connections, raised with SET GLOBAL;
//   - 1203: the global max_user_connections, raised with SET GLOBAL;
//   - 1226 for the max_user_connections or max_connections_per_hour
//     resource of an account, raised with ALTER USER.
//
// An "Incorrect string value" (1366) is a *dialects.CharsetError naming the
// column whose character set lacks a value's characters. Every other error, and nil, is returned unchanged.
func ClassifyError(err error) error {
	var me *mysql.MySQLError
	if !errors.As(err, &me) {
		return err
	}
	switch me.Number {
	case errTruncatedWrongValue:
		if !strings.HasPrefix(me.Message, "Incorrect string value") {
			return err
		}
		col := ""
		if m := columnRE.FindStringSubmatch(me.Message); m != nil {
			col = m[1]
		}
		return &dialects.CharsetError{Column: col, Err: me}
	case errConCount:
		return &dialects.ConnLimitError{Limit: "max_connections", Scope: "server",
			Raise: "SET GLOBAL max_connections = <n>", Err: me}
	case errTooManyUserConns:
		return &dialects.ConnLimitError{Limit: userResourceMaxConns, Scope: "user",
			Raise: "SET GLOBAL max_user_connections = <n>", Err: me}
	case errUserLimitReached:
		m := userLimitRE.FindStringSubmatch(me.Message)
		if m == nil || (m[2] != userResourceMaxConns && m[2] != userResourcePerHour) {
			return err // max_questions or max_updates: not a connection limit
		}
		account := "'" + strings.ReplaceAll(m[1], "'", "''") + "'@'<host>'"
		return &dialects.ConnLimitError{Limit: m[2], Scope: "user " + m[1],
			Raise: "ALTER USER " + account + " WITH " + strings.ToUpper(m[2]) + " <n>", Err: me}
	}
	return err
}

// ClassifyError implements dialects.ErrorClassifier for the lease table.
func (b *Builder) ClassifyError(err error) error { return ClassifyError(err) }

// ClassifyError implements dialects.ErrorClassifier for session locks.
func (o *SessionOps) ClassifyError(err error) error { return ClassifyError(err) }
