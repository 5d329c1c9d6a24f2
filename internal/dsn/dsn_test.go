package dsn

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/schedlock/schedlock/dialects"
)

func TestParse(t *testing.T) {
	dir := t.TempDir()
	existing := filepath.Join(dir, "jobs")
	if err := os.WriteFile(existing, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	const pragmas = "_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)"
	cases := []struct {
		in                    string
		family, scheme, where string
		conn, redacted        string
		opts                  Options
	}{
		{
			in:     "postgres://app:s3cr3t-P%40ss@db1:5432/jobs?sslmode=disable&x-table=ops.job_lock&x-preset=shedlock",
			family: "postgres", scheme: "postgres", where: "db1:5432",
			conn:     "postgres://app:s3cr3t-P%40ss@db1:5432/jobs?sslmode=disable",
			redacted: "postgres://app:xxxxx@db1:5432/jobs?sslmode=disable&x-table=ops.job_lock&x-preset=shedlock",
			opts:     Options{"table": "ops.job_lock", "preset": "shedlock"},
		},
		{
			// libpq's empty-host form goes to pgx as written: the
			// database jobs on the query's host, not a socket "/jobs".
			in:     "postgres:///jobs?host=127.0.0.1&port=5433",
			family: "postgres", scheme: "postgres", where: "127.0.0.1:5433",
			conn: "postgres:///jobs?host=127.0.0.1&port=5433", redacted: "postgres:///jobs?host=127.0.0.1&port=5433",
		},
		{
			in:     "postgresql://app:pw@/jobs?host=/run/pg&sslmode=disable",
			family: "postgres", scheme: "postgres", where: "/run/pg",
			conn: "postgres://app:pw@/jobs?host=/run/pg&sslmode=disable", redacted: "postgresql://app:xxxxx@/jobs?host=/run/pg&sslmode=disable",
		},
		{
			// dburl's socket form (no "//"): the directory, then the
			// database.
			in:     "postgres:/var/run/postgresql/jobs",
			family: "postgres", scheme: "postgres", where: "/var/run/postgresql",
			conn: "postgres:///jobs?host=%2Fvar%2Frun%2Fpostgresql", redacted: "postgres:/var/run/postgresql/jobs",
		},
		{
			in:     "postgresql://app@db1/jobs",
			family: "postgres", scheme: "postgres", where: "db1:5432",
			conn: "postgres://app@db1/jobs", redacted: "postgresql://app@db1/jobs",
		},
		{
			in:     "pgx://app:pw@db1:6432/jobs?x-strategy=session",
			family: "postgres", scheme: "pgx", where: "db1:6432",
			conn: "postgres://app:pw@db1:6432/jobs", redacted: "pgx://app:xxxxx@db1:6432/jobs?x-strategy=session",
			opts: Options{"strategy": "session"},
		},
		{
			in:     "kingbase://system:pw@kb1/jobs",
			family: "postgres", scheme: "kingbase", where: "kb1:54321",
			conn: "postgres://system:pw@kb1:54321/jobs", redacted: "kingbase://system:xxxxx@kb1/jobs",
		},
		{
			in:     "host=db1 port=5433 user=app password='s3 cr3t' dbname=jobs",
			family: "postgres", scheme: "postgres", where: "db1:5433",
			conn: "host=db1 port=5433 user=app password='s3 cr3t' dbname=jobs", redacted: "host=db1 port=5433 user=app password=xxxxx dbname=jobs",
		},
		{
			in:     "mysql://app:pw@db2:3306/jobs?x-strategy=table",
			family: "mysql", scheme: "mysql", where: "db2:3306",
			conn: "app:pw@tcp(db2:3306)/jobs?interpolateParams=true&multiStatements=false", redacted: "mysql://app:xxxxx@db2:3306/jobs?x-strategy=table",
			opts: Options{"strategy": "table"},
		},
		{
			in:     "mariadb://app@db2/jobs?multiStatements=true&tls=skip-verify",
			family: "mysql", scheme: "mysql", where: "db2:3306",
			conn: "app@tcp(db2)/jobs?interpolateParams=true&multiStatements=false&tls=skip-verify", redacted: "mariadb://app@db2/jobs?multiStatements=true&tls=skip-verify",
		},
		{
			in:     "root@tcp(127.0.0.1:3306)/test",
			family: "mysql", scheme: "mysql", where: "127.0.0.1:3306",
			conn: "root@tcp(127.0.0.1:3306)/test?multiStatements=false&interpolateParams=true", redacted: "root@tcp(127.0.0.1:3306)/test",
		},
		{
			in:     "root@tcp(127.0.0.1:3306)/test?charset=gbk",
			family: "mysql", scheme: "mysql", where: "127.0.0.1:3306",
			conn: "root@tcp(127.0.0.1:3306)/test?charset=gbk&multiStatements=false", redacted: "root@tcp(127.0.0.1:3306)/test?charset=gbk",
		},
		{
			in:     "root@tcp(127.0.0.1:3306)/test?interpolateParams=false",
			family: "mysql", scheme: "mysql", where: "127.0.0.1:3306",
			conn: "root@tcp(127.0.0.1:3306)/test?interpolateParams=false&multiStatements=false", redacted: "root@tcp(127.0.0.1:3306)/test?interpolateParams=false",
		},
		{
			in:     "root:pa?ss@tcp(127.0.0.1:3306)/test?charset=utf8mb4&x-table=jobs_lock",
			family: "mysql", scheme: "mysql", where: "127.0.0.1:3306",
			conn: "root:pa?ss@tcp(127.0.0.1:3306)/test?charset=utf8mb4&multiStatements=false&interpolateParams=true", redacted: "root:xxxxx@tcp(127.0.0.1:3306)/test?charset=utf8mb4&x-table=jobs_lock",
			opts: Options{"table": "jobs_lock"},
		},
		{
			in:     "sqlite:/var/lib/app/locks.db?x-preset=sys_sched_lock",
			family: "sqlite", scheme: "sqlite3", where: "/var/lib/app/locks.db",
			conn: "/var/lib/app/locks.db?" + pragmas, redacted: "/var/lib/app/locks.db",
			opts: Options{"preset": "sys_sched_lock"},
		},
		{
			in:     "/var/lib/app/locks.sqlite3",
			family: "sqlite", scheme: "sqlite3", where: "/var/lib/app/locks.sqlite3",
			conn: "/var/lib/app/locks.sqlite3?" + pragmas, redacted: "/var/lib/app/locks.sqlite3",
		},
		{
			in:     "file:locks.db?_pragma=busy_timeout(500)",
			family: "sqlite", scheme: "sqlite3", where: "locks.db",
			conn: "locks.db?_pragma=busy_timeout(500)&_pragma=journal_mode(WAL)", redacted: "locks.db",
		},
		{
			in:     existing,
			family: "sqlite", scheme: "sqlite3", where: existing,
			conn: existing + "?" + pragmas, redacted: existing,
		},
		{
			in:     "oracle://app:pw@ora1/ORCLPDB1",
			family: "oracle", scheme: "oracle", where: "ora1:1521",
			conn: "oracle://app:pw@ora1:1521/ORCLPDB1", redacted: "oracle://app:xxxxx@ora1/ORCLPDB1",
		},
		{
			in:     "sqlserver://sa:pw@mssql1/jobs",
			family: "sqlserver", scheme: "sqlserver", where: "mssql1:1433",
			conn: "sqlserver://sa:pw@mssql1/?database=jobs", redacted: "sqlserver://sa:xxxxx@mssql1/jobs",
		},
		{
			in:     "dm://SYSDBA:pw@dm1?schema=JOBS",
			family: "dameng", scheme: "dm", where: "dm1:5236",
			conn: "dm://SYSDBA:pw@dm1:5236/?schema=JOBS", redacted: "dm://SYSDBA:xxxxx@dm1?schema=JOBS",
		},
		{
			in:     "postgres://db1/jobs?password=hunter22",
			family: "postgres", scheme: "postgres", where: "db1:5432",
			conn: "postgres://db1/jobs?password=hunter22", redacted: "postgres://db1/jobs?password=xxxxx",
		},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			d, err := Parse(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			got := []string{d.Family, d.Scheme, d.Where, d.ConnString(), d.Redacted()}
			want := []string{tc.family, tc.scheme, tc.where, tc.conn, tc.redacted}
			for i, name := range []string{"family", "scheme", "where", "conn", "redacted"} {
				if got[i] != want[i] {
					t.Errorf("%s = %q, want %q", name, got[i], want[i])
				}
			}
			if tc.opts == nil {
				tc.opts = Options{}
			}
			if len(d.Options) != len(tc.opts) {
				t.Errorf("options = %v, want %v", d.Options, tc.opts)
			}
			for k, v := range tc.opts {
				if d.Options[k] != v {
					t.Errorf("option %s = %q, want %q", k, d.Options[k], v)
				}
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	const pw = "s3cr3t-P@ss"
	cases := []struct{ in, want string }{
		{"", "it is empty"},
		{"clickhouse://app:s3cr3t-P%40ss@h/db", "does not support clickhouse"},
		{"foo://app:s3cr3t-P%40ss@h/db", `unknown scheme "foo"`},
		{"postgres://app:s3cr3t-P@ss@h:badport/db", "invalid port"},
		{"postgres://app:s3cr3t-P%40ss@h/db?x-bogus=1", `unknown option "x-bogus"`},
		{"postgres://app:s3cr3t-P%40ss@h/db?x-table=a&x-table=b", "given twice"},
		{"postgres://app:s3cr3t-P%40ss@h/db?x-strategy=advisory", `unknown strategy "advisory"`},
		{"postgres://app:s3cr3t-P%40ss@h/db?x-preset=quartz", `unknown preset "quartz"`},
		{"postgres://app:s3cr3t-P%40ss@h/db?x-table=a;drop", "not a plain identifier"},
		{"/no/such/dir/locks", "cannot tell what database"},
		{"root:s3cr3t-P@ss@tcp(h:3306/db", "not a valid go-sql-driver DSN"},
		{"root:s3cr3t-P@ss@tcp(h:0)/db", `port "0" is not a number from 1 to 65535`},
		{"postgres://app:s3cr3t-P%40ss@h:99999/db", `port "99999" is not a number from 1 to 65535`},
		{"mysql://app:s3cr3t-P%40ss@h:65536/db", `port "65536" is not a number from 1 to 65535`},
		{"postgres://app:s3cr3t-P%40ss@h/db?sslmode=bogus", "sslmode is invalid"},
		{"postgres://app:s3cr3t-P%40ss@h/db?sslmode=verify-full&sslrootcert=/no/such/ca.pem", "/no/such/ca.pem"},
		{"host=h port=99999 password=s3cr3t-P@ss", "invalid port"},
		{"redis://:s3cr3t-P%40ss@h:1:2/0", `address "h:1:2" is not host:port`},
		{"redis://:s3cr3t-P%40ss@h/-1", "database number -1 is negative"},
		{"redis://:s3cr3t-P%40ss@h1,h2/0?master=m&db=-2", "database number -2 is negative"},
		{"rediss://:s3cr3t-P%40ss@h/0?cacert=/no/such/ca.pem", "/no/such/ca.pem"},
		{"etcd://h1:2379,h2:70000/jobs", `address "h2:70000": port "70000"`},
		{"etcds://h/jobs?cacert=/no/such/ca.pem", "/no/such/ca.pem"},
		{"zk://h:1:5/jobs", `address "h:1:5" is not host:port`},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			_, err := Parse(tc.in)
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not say %q", err, tc.want)
			}
			assertNoSecret(t, err.Error(), pw)
		})
	}
}

// assertNoSecret fails when text holds pw in any of the forms it is
// written in DSNs.
func assertNoSecret(t *testing.T, text, pw string) {
	t.Helper()
	for _, form := range []string{pw, strings.ReplaceAll(pw, "@", "%40"), strings.ReplaceAll(pw, "@", "%2540")} {
		if strings.Contains(text, form) {
			t.Errorf("password form %q leaked in %q", form, text)
		}
	}
}

func TestParseAcceptsAddresses(t *testing.T) {
	for _, in := range []string{
		"redis://[::1]:6379/0", "redis://h1:6379,h2:6380/0", "etcd://[::1]/jobs", "zk://h1,h2:2181/jobs",
		"postgres://u@h:1/db", "mysql://u@h:65535/db", "u@tcp(h)/db", "u@unix(/run/mysqld/mysqld.sock)/db",
		"host=/run/postgresql dbname=jobs", "postgres://u@h1:5432,h2:5433/db",
	} {
		if _, err := Parse(in); err != nil {
			t.Errorf("Parse(%q): %v", in, err)
		}
	}
}

func TestStringerAndGoStringAreRedacted(t *testing.T) {
	d, err := Parse("postgres://app:s3cr3t-P%40ss@db1/jobs")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{d.String(), d.GoString(), d.Redacted()} {
		assertNoSecret(t, s, "s3cr3t-P@ss")
		if !strings.Contains(s, "app:xxxxx@db1") {
			t.Errorf("%q is not the redacted DSN", s)
		}
	}
}

func TestDialectLookup(t *testing.T) {
	d, err := Parse("dm://SYSDBA:pw@dm1:5236?schema=JOBS")
	if err != nil {
		t.Fatal(err)
	}
	// The Dameng entry is registered; only its driver is left out by default.
	if dl, err := d.Dialect(); err != nil || dl.Name != "dameng" {
		t.Errorf("Dialect() = %v, %v; want the dameng entry", dl, err)
	}
	if _, err := entryFor("nosuch"); !errors.Is(err, dialects.ErrUnsupported) || !strings.Contains(err.Error(), "no nosuch support") {
		t.Errorf("entryFor(nosuch) error = %v", err)
	}
}

// TestParseRefusesHugeDSNs: a DSN over MaxBytes is refused before it is
// parsed, in a short line without the password; one just under it that
// does not parse quotes only its start.
func TestParseRefusesHugeDSNs(t *testing.T) {
	huge := "postgres://ops:s3cr3t-pw@db1/jobs?application_name=" + strings.Repeat("x", 131072)
	_, err := Parse(huge)
	if err == nil || !strings.Contains(err.Error(), "more than the 65536 (64 KiB) allowed") || len(err.Error()) > 120 || strings.Contains(err.Error(), "s3cr3t") {
		t.Errorf("Parse of a %d-byte DSN: %v", len(huge), err)
	}
	under := "nosuch://ops:s3cr3t-pw@db1/" + strings.Repeat("y", MaxBytes-100)
	_, err = Parse(under)
	// The message lists every linked scheme, so its length grows with the
	// backends; the DSN's own part must stay short.
	if err == nil || len(err.Error()) > 600 || strings.Contains(err.Error(), strings.Repeat("y", 64)) || strings.Contains(err.Error(), "s3cr3t") || !strings.Contains(err.Error(), "…") {
		t.Errorf("Parse of a %d-byte bad DSN: %.400v", len(under), err)
	}
}
