package dsn

import (
	"net/url"
	"strings"
	"testing"
)

// FuzzParse checks that Parse never panics and that neither the redacted
// DSN nor any error depends on the password: the same DSN with another
// password must redact to the same text and fail with the same message.
// The raw-url form writes the password into a URL unescaped, so its
// delimiters reshape the DSN: there it checks only that the password never
// shows.
func FuzzParse(f *testing.F) {
	schemes := []string{"postgres", "postgresql", "pgx", "kingbase", "mysql", "mariadb", "oracle", "sqlserver", "dm", "native-mysql", "keyvalue", "raw-url"}
	f.Add(uint8(0), "app", "s3cr3t-P@ss", "db1:5432", "jobs", "sslmode=disable&x-table=t")
	f.Add(uint8(4), "root", "p:w/d?x#y", "127.0.0.1", "test", "x-strategy=table")
	f.Add(uint8(9), "root", "pa?ss@", "127.0.0.1:3306", "test", "")
	f.Add(uint8(10), "app", "it's", "db1", "jobs", "")
	f.Add(uint8(11), "app", "?pa/ss#w@rd", "db1", "jobs", "sslmode=disable")
	f.Fuzz(func(t *testing.T, scheme uint8, user, pass, host, db, query string) {
		build := func(pw string) string {
			switch s := schemes[int(scheme)%len(schemes)]; s {
			case "native-mysql":
				q := ""
				if query != "" {
					q = "?" + query
				}
				return user + ":" + pw + "@tcp(" + host + ")/" + db + q
			case "raw-url":
				q := ""
				if query != "" {
					q = "?" + query
				}
				return "postgres://" + user + ":" + pw + "@" + host + "/" + db + q
			case "keyvalue":
				q := strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace
				return "host='" + q(host) + "' user='" + q(user) + "' password='" + q(pw) + "' dbname='" + q(db) + "'"
			default:
				u := url.URL{Scheme: s, User: url.UserPassword(user, pw), Host: host, Path: "/" + db, RawQuery: query}
				return u.String()
			}
		}
		const other = "Zz9-other-pw"
		d1, err1 := Parse(build(pass))
		if schemes[int(scheme)%len(schemes)] == "raw-url" {
			if !distinctive(pass, user, host, db, query) {
				return
			}
			shown := ""
			if err1 != nil {
				shown = err1.Error()
			} else {
				shown = d1.Redacted() + d1.String() + d1.GoString()
			}
			if strings.Contains(shown, pass) {
				t.Fatalf("%q shows the password %q", shown, pass)
			}
			return
		}
		d2, err2 := Parse(build(other))
		if (err1 == nil) != (err2 == nil) {
			// Some passwords make a DSN unparseable (e.g. a raw '/' or '@'
			// in go-sql-driver's form); the error must still hide them.
			if err1 != nil && distinctive(pass, user, host, db, query) && strings.Contains(err1.Error(), pass) {
				t.Fatalf("error shows the password: %v", err1)
			}
			return
		}
		if err1 != nil {
			if got, want := err1.Error(), strings.ReplaceAll(err2.Error(), other, pass); distinctive(pass, user, host, db, query) && strings.Contains(got, pass) && got == want {
				t.Fatalf("error shows the password: %v", err1)
			}
			return
		}
		if d1.Redacted() != d2.Redacted() {
			t.Fatalf("redacted DSN depends on the password:\n%q\n%q", d1.Redacted(), d2.Redacted())
		}
		if distinctive(pass, user, host, db, query) {
			for _, s := range []string{d1.Redacted(), d1.String(), d1.GoString()} {
				if strings.Contains(s, pass) {
					t.Fatalf("%q shows the password %q", s, pass)
				}
			}
		}
	})
}

// distinctive reports whether pw is long enough to be scrubbed wherever it
// appears and does not occur in the public parts of the DSN.
func distinctive(pw string, public ...string) bool {
	if len(pw) < minFreeTextLen {
		return false
	}
	for _, p := range public {
		// The public parts as the DSN writes them too: an escaped user
		// "%00000" holds the password "0000".
		for _, form := range []string{p, url.QueryEscape(p), url.PathEscape(p), url.User(p).String()} {
			if strings.Contains(form, pw) {
				return false
			}
		}
	}
	for _, word := range []string{"postgres", "mysql", "tcp", "xxxxx", "invalid", "host", "user", "password", "dbname"} {
		if strings.Contains(word, pw) {
			return false
		}
	}
	return true
}
