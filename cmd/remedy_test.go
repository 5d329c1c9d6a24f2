package cmd

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/mysql"
	"github.com/schedlock/schedlock/dialects/postgres"
)

// TestCLITermsComplete: every term the backends use has command line
// words, and none survives cliText.
func TestCLITermsComplete(t *testing.T) {
	for _, term := range dialects.Terms() {
		words, ok := cliTerms[term]
		if !ok || words == "" {
			t.Errorf("no command line words for %q", term)
			continue
		}
		if got := cliText("x " + string(term) + " y"); got != "x "+words+" y" {
			t.Errorf("cliText(%q) = %q", term, got)
		}
	}
	if len(cliTerms) != len(dialects.Terms()) {
		t.Errorf("%d command line terms for %d library terms", len(cliTerms), len(dialects.Terms()))
	}
}

// TestCLIRemedyWords: the remedies read as the flags that apply them.
func TestCLIRemedyWords(t *testing.T) {
	for _, tc := range []struct {
		r    dialects.Remedy
		want string
	}{
		{dialects.UseTableStrategy, "use --strategy table"},
		{dialects.Remedy{Kind: dialects.RemedyUseStrategy, Strategy: dialects.StrategySession}, "use --strategy session"},
		{dialects.Remedy{Kind: dialects.RemedyCreateTable, Table: "shedlock", Statement: "CREATE TABLE shedlock (\n  name TEXT\n)"},
			"create it with --create-table or run: CREATE TABLE shedlock ( name TEXT )"},
		{dialects.Remedy{Kind: dialects.RemedyKillSession}, "free it by unlock --kill-session"},
		{dialects.Remedy{Kind: dialects.RemedyGrant, Privilege: "EXECUTE ON DBMS_LOCK", Statement: "GRANT EXECUTE ON SYS.DBMS_LOCK TO app"},
			"run: GRANT EXECUTE ON SYS.DBMS_LOCK TO app"},
	} {
		if got := cliRemedy(tc.r); got != tc.want {
			t.Errorf("cliRemedy(%+v) = %q, want %q", tc.r, got, tc.want)
		}
		if lib := tc.r.String(); strings.Contains(lib, "--") {
			t.Errorf("library words %q name a flag", lib)
		}
	}
}

// TestCLIErrorKeepsChain: the worded error still matches its sentinels
// and typed errors.
func TestCLIErrorKeepsChain(t *testing.T) {
	missing := &dialects.MissingTableError{Table: "shedlock", CreateSQL: "CREATE TABLE shedlock (name TEXT)"}
	run, _, err := testRoot(t).Find([]string{"run"})
	if err != nil {
		t.Fatal(err)
	}
	err = cliError(run, &UsageError{Err: fmt.Errorf("run: %w", missing), Command: "schedlock run"})
	want := "run: lock table shedlock does not exist; create it with --create-table or run: CREATE TABLE shedlock (name TEXT) (see 'schedlock run --help')"
	if err.Error() != want {
		t.Errorf("got  %q\nwant %q", err.Error(), want)
	}
	var usage *UsageError
	if !errors.As(err, &usage) || !errors.Is(err, dialects.ErrNoTable) {
		t.Errorf("%v lost its chain", err)
	}
	if r, ok := dialects.RemedyOf(err); !ok || r.Kind != dialects.RemedyCreateTable || r.Table != "shedlock" {
		t.Errorf("remedy %+v (%v)", r, ok)
	}
	if lib := missing.Error(); strings.Contains(lib, "--") || !strings.Contains(lib, "lock.DB.CreateTable") {
		t.Errorf("library text %q", lib)
	}
}

// TestSessionOnSQLiteAdvisesTheFlag: the library's "use the table
// strategy" reaches the command line as --strategy table.
func TestSessionOnSQLiteAdvisesTheFlag(t *testing.T) {
	db := filepath.Join(t.TempDir(), "locks.db")
	if err := os.WriteFile(db, nil, 0o600); err != nil { // run refuses a missing file first
		t.Fatal(err)
	}
	r := runCmd(t, false, nil, "run", "--dsn", db, "--strategy", "session", "--name", "x", "--", "true")
	if r.err == nil {
		t.Fatal("session strategy on SQLite succeeded")
	}
	msg := r.err.Error()
	if !strings.Contains(msg, "sqlite has no session locks; use --strategy table") || strings.Contains(msg, "lock.Strategy") {
		t.Errorf("error %q", msg)
	}
	if !errors.Is(r.err, dialects.ErrUnsupported) {
		t.Errorf("error %q does not match ErrUnsupported", msg)
	}
}

// TestBackendRefusalsAdviseTheFlag: a backend's refusal of the session
// strategy carries the table strategy as a structured remedy, which the
// library words without a flag and the command line as --strategy table.
func TestBackendRefusalsAdviseTheFlag(t *testing.T) {
	refusals := map[string]error{}
	_, refusals["MySQL 5.6"] = mysql.NewSessionLocker(nil, &mysql.SessionOps{Info: mysql.ParseVersion("5.6.51", "")})
	_, refusals["TiDB"] = mysql.NewSessionLocker(nil, &mysql.SessionOps{Info: mysql.ParseVersion("8.0.11-TiDB-v8.5.6", "")})
	refusals["CockroachDB"] = postgres.SessionRefusal(postgres.ParseBanner("CockroachDB CCL v24.3.0 (x86_64-pc-linux-gnu)"))
	refusals["YugabyteDB 2.18"] = postgres.SessionRefusal(postgres.ParseBanner("PostgreSQL 11.2-YB-2.18.0.1-b0"))
	for name, err := range refusals {
		if !errors.Is(err, dialects.ErrUnsupported) {
			t.Errorf("%s: %v, want ErrUnsupported", name, err)
			continue
		}
		if fix, ok := dialects.RemedyOf(err); !ok || fix != dialects.UseTableStrategy {
			t.Errorf("%s: remedy %+v (%v), want the table strategy", name, fix, ok)
		}
		if lib := err.Error(); strings.Contains(lib, "--") || !strings.HasSuffix(lib, "; use the table strategy (lock.StrategyTable)") {
			t.Errorf("%s: library text %q", name, lib)
		}
		cli := cliError(nil, err)
		if msg := cli.Error(); !strings.HasSuffix(msg, "; use --strategy table") || strings.Contains(msg, "lock.Strategy") {
			t.Errorf("%s: command line text %q", name, msg)
		}
		if !errors.Is(cli, dialects.ErrUnsupported) {
			t.Errorf("%s: the worded error lost ErrUnsupported", name)
		}
	}
	_, why := mysql.Recommend(mysql.ParseVersion("5.6.51", ""))
	if got := cliText(why); !strings.HasSuffix(got, "; use --strategy table") || strings.Contains(why, "--") {
		t.Errorf("MySQL 5.6 recommendation: library %q, command line %q", why, got)
	}
}
