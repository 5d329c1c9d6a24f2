package dsn

import (
	"strings"
	"testing"
)

// TestEmptyPasswordRedactsLikeAnyOther: an empty password is masked like
// any other, so the redacted DSN does not tell whether there is one.
func TestEmptyPasswordRedactsLikeAnyOther(t *testing.T) {
	for _, tc := range []struct{ empty, with, want string }{
		{"0:@tcp(0)/0", "0:Zz9-other-pw@tcp(0)/0", "0:xxxxx@tcp(0)/0"},
		{"postgres://app:@db1/jobs", "postgres://app:Zz9-other-pw@db1/jobs", "postgres://app:xxxxx@db1/jobs"},
		{"mysql://app:@db1/jobs?password=", "mysql://app:pw@db1/jobs?password=pw", "mysql://app:xxxxx@db1/jobs?password=xxxxx"},
		{"host=db1 user=app password=''", "host=db1 user=app password='pw'", "host=db1 user=app password=xxxxx"},
	} {
		for _, raw := range []string{tc.empty, tc.with} {
			d, err := Parse(raw)
			if err != nil {
				t.Fatalf("Parse(%q): %v", raw, err)
			}
			if got := d.Redacted(); got != tc.want {
				t.Errorf("Parse(%q).Redacted() = %q, want %q", raw, got, tc.want)
			}
		}
	}
}

// TestPasswordsWithDelimitersNeverShow: a password written raw with a
// byte that ends a part of a URL ('/', '?', '#', '@', ':') is hidden from
// the redacted DSN and from every parse error, whatever the parser made
// of it.
func TestPasswordsWithDelimitersNeverShow(t *testing.T) {
	const pw = "SECRETpw"
	dsns := []string{
		// go-sql-driver's form: the driver takes the last '@' before the
		// last '/', so a '/' in the password is still its form.
		"root:p/" + pw + "@tcp(127.0.0.1:3306)/test",
		"root:" + pw + "/x@tcp(127.0.0.1:3306)/test",
		"root:" + pw + "/x@/test",
		"u:" + pw + "@tcp(h)/db?x=a@b/c",
		"u:" + pw + "@tcp(h)/db?x-table=a/b",
		"u:" + pw + "@tcp(h/db",
		// URLs whose delimiters cut the password short.
		"postgres://u:" + pw + "?x@h/db",
		"postgres://u:" + pw + "#x@h/db",
		"postgres://u:" + pw + "/x@h/db",
		"postgres://u:?" + pw + "@h/db",
		"postgres://u:12?" + pw + "@h/db",
		"postgres://u:?a=" + pw + "@h/db",
		"postgres://u:?x@h/db?password=" + pw + "&a=1",
		"postgres://h?password=" + pw + "@x",
		"postgres://u:" + pw + "%zz@h/db",
		"postgres://u:" + pw + "@h/db?sslpassword=" + pw,
		// Neither a URL nor go-sql-driver's form.
		"u:" + pw + "@(h)/db",
		"u:" + pw + "@h/db",
		// key=value strings, parseable or not.
		"host=h password = " + pw + " user=u",
		"host=h password = '" + pw + " user=u",
		"host=h sslpassword=" + pw,
	}
	for _, raw := range dsns {
		d, err := Parse(raw)
		shown := ""
		if err != nil {
			shown = err.Error()
		} else {
			shown = d.Redacted() + " " + d.String() + " " + d.GoString()
		}
		if strings.Contains(shown, pw) || strings.Contains(shown, pw[:minFreeTextLen]) || strings.Contains(shown, pw[len(pw)-minFreeTextLen:]) {
			t.Errorf("Parse(%q) shows the password: %s", raw, shown)
		}
		if !strings.Contains(shown, Mask) {
			t.Errorf("Parse(%q) masks nothing: %s", raw, shown)
		}
	}
}

// TestQueryAtSignKeepsTheDSNReadable: an '@' in a query value does not
// mask the host and database of a DSN that parses.
func TestQueryAtSignKeepsTheDSNReadable(t *testing.T) {
	for raw, want := range map[string]string{
		"postgres://h:5432/db?application_name=a@b":    "postgres://h:5432/db?application_name=a@b",
		"postgres://u:pw@h/db?application_name=a@b":    "postgres://u:xxxxx@h/db?application_name=a@b",
		"u:pw@tcp(h:3306)/db?connectionAttributes=a@b": "u:xxxxx@tcp(h:3306)/db?connectionAttributes=a@b",
	} {
		d, err := Parse(raw)
		if err != nil {
			t.Fatalf("Parse(%q): %v", raw, err)
		}
		if got := d.Redacted(); got != want {
			t.Errorf("Parse(%q).Redacted() = %q, want %q", raw, got, want)
		}
	}
}
