package mysql

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/schedlock/schedlock/dialects"
)

func TestClassifyConnLimit(t *testing.T) {
	for _, c := range []struct {
		number              uint16
		msg                 string
		limit, scope, raise string
	}{
		{errConCount, "Too many connections", "max_connections", "server", "SET GLOBAL max_connections = <n>"},
		{errTooManyUserConns, "User app already has more than 'max_user_connections' active connections", "max_user_connections", "user", "SET GLOBAL max_user_connections = <n>"},
		{errUserLimitReached, "User 'app' has exceeded the 'max_user_connections' resource (current value: 1)", "max_user_connections", "user app", "ALTER USER 'app'@'<host>' WITH MAX_USER_CONNECTIONS <n>"},
		{errUserLimitReached, "User 'app' has exceeded the 'max_connections_per_hour' resource (current value: 5)", "max_connections_per_hour", "user app", "ALTER USER 'app'@'<host>' WITH MAX_CONNECTIONS_PER_HOUR <n>"},
	} {
		server := &mysql.MySQLError{Number: c.number, Message: c.msg}
		err := ClassifyError(fmt.Errorf("connect: %w", server))
		var limit *dialects.ConnLimitError
		if !errors.As(err, &limit) || !errors.Is(err, dialects.ErrConnLimit) {
			t.Errorf("%d: got %v, want a ConnLimitError", c.number, err)
			continue
		}
		if limit.Limit != c.limit || limit.Scope != c.scope || limit.Raise != c.raise || limit.Restart {
			t.Errorf("%d %q: got %+v", c.number, c.msg, limit)
		}
		if !errors.Is(err, server) || !strings.Contains(err.Error(), c.limit) {
			t.Errorf("%d: message %q does not name %s", c.number, err, c.limit)
		}
	}
	for _, other := range []error{
		&mysql.MySQLError{Number: errUserLimitReached, Message: "User 'app' has exceeded the 'max_questions' resource (current value: 10)"},
		&mysql.MySQLError{Number: 1146, Message: "Table 'test.x' doesn't exist"},
	} {
		if got := ClassifyError(other); got != other {
			t.Errorf("%v changed to %v", other, got)
		}
	}
	if ClassifyError(nil) != nil {
		t.Error("nil is not kept")
	}
}

// TestClassifyCharset: "Incorrect string value" (1366) is a CharsetError
// naming the column, in MariaDB's and MySQL's wording; it matches
// ErrInvalid and keeps the server's error.
func TestClassifyCharset(t *testing.T) {
	for msg, col := range map[string]string{
		"Incorrect string value: '\\xE6\\x97\\xA5\\xE6\\x9C\\xAC...' for column `test`.`shedlock`.`name` at row 1": "name",
		"Incorrect string value: '\\xF0\\x9F\\x94\\x92' for column 'locked_by' at row 1":                           "locked_by",
		"Incorrect string value: '\\xE2\\x9C\\x93' for column `lock_name` at row 1":                                "lock_name",
		"Incorrect string value: '\\xE2\\x9C\\x93'":                                                                "",
	} {
		server := &mysql.MySQLError{Number: errTruncatedWrongValue, Message: msg}
		err := ClassifyError(fmt.Errorf("acquire: %w", server))
		var ce *dialects.CharsetError
		if !errors.As(err, &ce) || !errors.Is(err, dialects.ErrInvalid) || !errors.Is(err, server) {
			t.Errorf("%q: got %v (%T), want a CharsetError matching ErrInvalid around the server's error", msg, err, err)
			continue
		}
		if ce.Column != col || !strings.Contains(err.Error(), "character set") {
			t.Errorf("%q: column %q (want %q), message %q", msg, ce.Column, col, err)
		}
	}
	other := &mysql.MySQLError{Number: errTruncatedWrongValue, Message: "Incorrect integer value: 'x' for column `t`.`n` at row 1"}
	if got := ClassifyError(other); got != other {
		t.Errorf("%v changed to %v", other, got)
	}
}
