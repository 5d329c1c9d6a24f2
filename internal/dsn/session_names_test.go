package dsn

import (
	"strings"
	"testing"

	"github.com/schedlock/schedlock/dialects"
)

// x-session-names and x-session-key are parsed, stripped from what the
// driver sees, and refused where the value is unknown, the key comes
// without raw names, a namespace comes with them, or the backend has no
// such names, each before anything is opened.
func TestSessionNamesOptions(t *testing.T) {
	d, err := Parse("postgres://app@db1:5432/jobs?sslmode=disable&x-session-names=raw&x-session-key=hashtext")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := d.Options.SessionNames(), (dialects.SessionNames{Raw: true, Key: dialects.KeyHashtext}); got != want {
		t.Errorf("SessionNames = %+v, want %+v", got, want)
	}
	if strings.Contains(d.conn, "session") {
		t.Errorf("the driver sees %q", d.conn)
	}
	m, err := Parse("mysql://root@127.0.0.1:3306/test?x-session-names=raw")
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Options.SessionNames(); got != (dialects.SessionNames{Raw: true}) {
		t.Errorf("MySQL SessionNames = %+v, want raw", got)
	}
	if _, err := Parse("mysql://root@127.0.0.1:3306/test?x-session-names=scoped"); err != nil {
		t.Errorf("x-session-names=scoped: %v", err)
	}
	for _, c := range []struct{ dsn, want string }{
		{"mysql://root@127.0.0.1:3306/test?x-session-names=exact", `unknown session names "exact"`},
		{"postgres://app@db1/jobs?x-session-key=hashtext", "x-session-key applies to raw session names"},
		{"postgres://app@db1/jobs?x-session-names=raw&x-session-key=md5", `unknown session key derivation "md5"`},
		{"postgres://app@db1/jobs?x-session-names=raw", "raw session names need a key derivation"},
		{"mysql://root@127.0.0.1:3306/test?x-session-names=raw&x-session-key=hashtext", "the hashtext key derivation is PostgreSQL's"},
		{"mysql://root@127.0.0.1:3306/test?x-session-names=raw&x-namespace=staging", "x-namespace does not apply to raw session names"},
		{"sqlite:/tmp/locks.db?x-session-names=raw", "SQLite has no raw session names"},
	} {
		_, err := Parse(c.dsn)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v, want one line containing %q", c.dsn, err, c.want)
		}
	}
}
