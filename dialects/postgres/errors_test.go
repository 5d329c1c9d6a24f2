package postgres

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/schedlock/schedlock/dialects"
)

func TestClassifyConnLimit(t *testing.T) {
	for _, c := range []struct {
		msg, limit, scope, raise string
		restart                  bool
	}{
		{"sorry, too many clients already", "max_connections", "server", "ALTER SYSTEM SET max_connections = <n>", true},
		{"remaining connection slots are reserved for roles with the SUPERUSER attribute", "max_connections", "server", "ALTER SYSTEM SET max_connections = <n>", true},
		{`too many connections for role "app"`, "rolconnlimit", "role app", `ALTER ROLE "app" CONNECTION LIMIT <n>`, false},
		{`too many connections for database "jobs"`, "datconnlimit", "database jobs", `ALTER DATABASE "jobs" CONNECTION LIMIT <n>`, false},
	} {
		server := &pgconn.PgError{Severity: "FATAL", Code: codeTooManyConnections, Message: c.msg}
		err := ClassifyError(fmt.Errorf("failed to connect to `user=app`: %w", server))
		var limit *dialects.ConnLimitError
		if !errors.As(err, &limit) || !errors.Is(err, dialects.ErrConnLimit) {
			t.Errorf("%q: got %v, want a ConnLimitError", c.msg, err)
			continue
		}
		if limit.Limit != c.limit || limit.Scope != c.scope || limit.Raise != c.raise || limit.Restart != c.restart {
			t.Errorf("%q: got %+v", c.msg, limit)
		}
		if !errors.Is(err, server) || !strings.Contains(err.Error(), c.limit) || strings.Contains(err.Error(), "user=app") {
			t.Errorf("%q: message %q must name %s and quote only the server", c.msg, err, c.limit)
		}
	}
	other := &pgconn.PgError{Code: codeUndefinedTable, Message: `relation "x" does not exist`}
	if got := ClassifyError(other); got != other {
		t.Errorf("another server error changed: %v", got)
	}
	if ClassifyError(nil) != nil {
		t.Error("nil is not kept")
	}
}
