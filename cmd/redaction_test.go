package cmd

import (
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/schedlock/schedlock/checks"
	"github.com/schedlock/schedlock/internal/dsn"
	"github.com/schedlock/schedlock/internal/testnet"
)

// secret is a password no output may show, in any of its spellings.
const secret = "s3cr3t-P@ss"

var secretForms = []string{secret, url.QueryEscape(secret), url.PathEscape(secret), strings.ReplaceAll(secret, "@", "%2540")}

func assertHidden(t *testing.T, what, text string) {
	t.Helper()
	for _, form := range secretForms {
		if strings.Contains(text, form) {
			t.Errorf("%s shows the password (as %q):\n%s", what, form, text)
		}
	}
}

func assertRunHidden(t *testing.T, r result) {
	t.Helper()
	assertHidden(t, "stdout", r.stdout)
	assertHidden(t, "stderr", r.stderr)
	if r.err != nil {
		assertHidden(t, "error", r.err.Error())
	}
}

// TestPasswordNeverShownOnErrors feeds DSNs carrying the password through
// every failure path the command has, on a terminal and piped, quiet and
// verbose, from the flag and from the environment.
func TestPasswordNeverShownOnErrors(t *testing.T) {
	esc := url.QueryEscape(secret)
	closed := testnet.FreeAddr(t)
	dsns := map[string]string{
		"unknown scheme":          "nosuch://app:" + esc + "@db1/jobs",
		"unsupported database":    "clickhouse://app:" + esc + "@db1/jobs",
		"no dialect compiled in":  "dm://app:" + esc + "@" + closed + "?schema=JOBS",
		"malformed url":           "postgres://app:" + secret + "@db1:badport/jobs",
		"unknown option":          "postgres://app:" + esc + "@db1/jobs?x-bogus=1",
		"bad option value":        "postgres://app:" + esc + "@db1/jobs?x-strategy=advisory",
		"postgres refused":        "postgres://app:" + esc + "@" + closed + "/jobs",
		"mysql refused":           "mysql://app:" + esc + "@" + closed + "/jobs",
		"go-sql-driver refused":   "app:" + secret + "@tcp(" + closed + ")/jobs",
		"malformed go-sql-driver": "app:" + secret + "@tcp(" + closed + "/jobs",
		"key=value refused":       "host=127.0.0.1 port=" + strings.Split(closed, ":")[1] + " user=app password='" + secret + "' dbname=jobs",
		"query password refused":  "postgres://" + closed + "/jobs?user=app&password=" + esc,
	}
	if raw := os.Getenv("SCHEDLOCK_TEST_POSTGRES_DSN"); raw != "" {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		role := *u
		role.User = url.UserPassword("schedlock_no_such_role", secret)
		role.Path = "/nonexistent_db"
		dsns["postgres unknown role"] = role.String()
		db := *u
		db.User = url.UserPassword(u.User.Username(), secret)
		db.Path = "/schedlock_no_such_db"
		dsns["postgres unknown database"] = db.String()
	}
	if raw := os.Getenv("SCHEDLOCK_TEST_MYSQL_DSN"); raw != "" {
		d, err := dsn.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		dsns["mysql wrong password"] = "mysql://schedlock_no_such_user:" + esc + "@" + d.Where + "/test"
	}
	for name, d := range dsns {
		t.Run(name, func(t *testing.T) {
			for _, tty := range []bool{false, true} {
				for _, extra := range [][]string{nil, {"-v"}, {"-o", "json"}, {"-o", "junit", "-q"}} {
					r := runCmd(t, tty, nil, append([]string{"selfcheck", "--dsn", d, "--timeout", "10s"}, extra...)...)
					if r.err == nil {
						t.Fatalf("selfcheck succeeded on %s", name)
					}
					assertRunHidden(t, r)
				}
				r := runCmd(t, tty, map[string]string{EnvDSN: d}, "selfcheck", "-v", "--timeout", "10s")
				if r.err == nil {
					t.Fatalf("selfcheck succeeded on %s from $SCHEDLOCK_DSN", name)
				}
				assertRunHidden(t, r)
			}
		})
	}
}

// TestPasswordNeverShownInReports runs selfcheck on the live PostgreSQL
// with the password in the DSN (trust authentication accepts any) and
// checks every report format.
func TestPasswordNeverShownInReports(t *testing.T) {
	u := livePostgresURL(t)
	u.User = url.UserPassword(u.User.Username(), secret)
	for _, format := range []string{"table", "json", "yaml", "markdown", "junit"} {
		for _, tty := range []bool{false, true} {
			r := runCmd(t, tty, nil, "selfcheck", "--dsn", u.String(), "-o", format, "-v", "--check", "detect", "--check", "table.acquire", "--check", "session.acquire")
			if r.err != nil {
				t.Fatalf("-o %s: %v\n%s", format, r.err, r.stderr)
			}
			assertRunHidden(t, r)
			if !strings.Contains(r.stdout+r.stderr, u.User.Username()+":xxxxx@") {
				t.Errorf("-o %s: neither report nor -v shows the redacted target:\n%s\n%s", format, r.stdout, r.stderr)
			}
		}
	}
}

func TestScrubReport(t *testing.T) {
	var s dsn.Scrubber
	s.Add(secret)
	r := &checks.Report{Target: "postgres://app:" + url.QueryEscape(secret) + "@h/db", Results: []checks.Result{
		{ID: "x", Title: "t", Detail: "failed to connect to postgres://app:" + secret + "@h/db", Remedy: "password=" + secret},
	}}
	scrubReport(r, &s)
	assertHidden(t, "target", r.Target)
	assertHidden(t, "detail", r.Results[0].Detail)
	assertHidden(t, "remedy", r.Results[0].Remedy)
}
