package cmd

import (
	"strings"
	"testing"
)

// libpq's URL form with an empty host, the host and port in the query
// (postgres:///DB?host=H&port=P), reaches database DB on H:P, as psql
// reads it: detect and run work through it.
func TestPostgresEmptyHostURL(t *testing.T) {
	u := livePostgresURL(t)
	q := u.Query()
	q.Set("host", u.Hostname())
	q.Set("port", u.Port())
	if u.User != nil {
		q.Set("user", u.User.Username())
		if pw, ok := u.User.Password(); ok {
			q.Set("password", pw)
		}
	}
	dsn := "postgres:///" + strings.TrimPrefix(u.Path, "/") + "?" + q.Encode()
	r := runCmd(t, false, nil, "detect", "--dsn", dsn, "-o", "json")
	if r.err != nil {
		t.Fatalf("detect --dsn %s: %v", dsn, r.err)
	}
	if !strings.Contains(r.stdout, `"product": "postgresql"`) {
		t.Errorf("detect did not find PostgreSQL:\n%s", r.stdout)
	}
	if r := runCmd(t, false, nil, "run", "--dsn", dsn, "--name", "libpq-url", "--", "true"); r.err != nil {
		t.Fatalf("run: %v\n%s", r.err, r.stderr)
	}
}
