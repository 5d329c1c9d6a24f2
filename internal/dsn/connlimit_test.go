package dsn

import (
	"errors"
	"testing"

	"github.com/schedlock/schedlock/dialects"
)

// TestConnectErrorNamesTheLimit: a ping refused over a connection limit
// is one line naming the limit and how to raise it.
func TestConnectErrorNamesTheLimit(t *testing.T) {
	entry, ok := dialects.Lookup("postgres")
	if !ok {
		t.Skip("no postgres backend in this build")
	}
	server := errors.New("FATAL: sorry, too many clients already (SQLSTATE 53300)")
	for _, tc := range []struct {
		limit *dialects.ConnLimitError
		want  string
	}{
		{&dialects.ConnLimitError{Limit: "max_connections", Scope: "server", Raise: "ALTER SYSTEM SET max_connections = <n>", Restart: true, Err: server},
			"cannot connect to postgres at 127.0.0.1:5432: the server's connection limit max_connections is reached — raise it (ALTER SYSTEM SET max_connections …, then restart) or close idle connections"},
		{&dialects.ConnLimitError{Limit: "max_user_connections", Scope: "user", Err: server},
			"cannot connect to postgres at 127.0.0.1:5432: the user's connection limit max_user_connections is reached — raise it or close idle connections"},
	} {
		d := &DSN{Family: "postgres", Where: "127.0.0.1:5432"}
		err := d.connectError(entry, tc.limit)
		if err.Error() != tc.want {
			t.Errorf("got  %q\nwant %q", err.Error(), tc.want)
		}
		if !errors.Is(err, dialects.ErrConnLimit) {
			t.Errorf("%v does not match ErrConnLimit", err)
		}
	}
}
