package cmd

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/internal/iostreams"
	"github.com/schedlock/schedlock/internal/livetest"
)

// randomName is a role or account name no other test uses.
func randomName(prefix string) string {
	b := make([]byte, 5)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// assertConnLimit checks that detect on dsn fails at once, in one line
// that names the limit and how to raise it, matching ErrConnLimit.
func assertConnLimit(t *testing.T, dsn string, want ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ios, _, _, _ := iostreams.Test()
	f := testFactory(ios, map[string]string{}, t.TempDir())
	err := Execute(ctx, f, []string{"detect", "--dsn", dsn})
	if err == nil {
		t.Fatal("detect succeeded over the connection limit")
	}
	msg := err.Error()
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("error %q does not say %q", msg, w)
		}
	}
	if !errors.Is(err, dialects.ErrConnLimit) {
		t.Errorf("error %q does not match ErrConnLimit", msg)
	}
	if strings.Contains(msg, "\n") || strings.Contains(msg, "pw-"+"secret") {
		t.Errorf("error %q spans lines or shows the password", msg)
	}
}

// TestDetectConnLimitPostgres: a role with CONNECTION LIMIT 0 is refused
// with SQLSTATE 53300, which detect names as the role's limit.
func TestDetectConnLimitPostgres(t *testing.T) {
	raw := livetest.DSN(t, livetest.Postgres)
	admin, err := sql.Open("pgx", raw)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.Close() })
	role := randomName("sl_limit_")
	ctx := context.Background()
	if _, err := admin.ExecContext(ctx, `CREATE ROLE `+role+` LOGIN PASSWORD 'pw-secret' CONNECTION LIMIT 0`); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := admin.ExecContext(context.Background(), `DROP ROLE IF EXISTS `+role); err != nil {
			t.Errorf("drop role %s: %v", role, err)
		}
	})
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(role, "pw-secret")
	assertConnLimit(t, u.String(),
		"cannot connect to postgres at "+u.Host+": the role "+role+"'s connection limit rolconnlimit is reached",
		"raise it (ALTER ROLE \""+role+"\" CONNECTION LIMIT …) or close idle connections")
}

// TestDetectConnLimitMySQL: an account WITH MAX_USER_CONNECTIONS 1 whose
// one connection is held is refused with error 1226, which detect names
// as the user's limit.
func TestDetectConnLimitMySQL(t *testing.T) {
	raw := livetest.DSN(t, livetest.MySQL)
	cfg, err := mysql.ParseDSN(raw)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := sql.Open("mysql", raw)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.Close() })
	ctx := context.Background()
	// Created for 127.0.0.1, not '%': an anonymous ''@localhost account
	// (mariadb-install-db makes one) would shadow a '%' account.
	user := randomName("sl_lim_")
	account := "'" + user + "'@'127.0.0.1'"
	if _, err := admin.ExecContext(ctx, "CREATE USER "+account+" IDENTIFIED BY 'pw-secret' WITH MAX_USER_CONNECTIONS 1"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := admin.ExecContext(context.Background(), "DROP USER IF EXISTS "+account); err != nil {
			t.Errorf("drop user %s: %v", account, err)
		}
	})
	if _, err := admin.ExecContext(ctx, "GRANT SELECT ON "+cfg.DBName+".* TO "+account); err != nil {
		t.Fatal(err)
	}

	holderCfg := cfg.Clone()
	holderCfg.User, holderCfg.Passwd = user, "pw-secret"
	holderCfg.Net, holderCfg.Addr = "tcp", "127.0.0.1:"+portOf(cfg.Addr)
	holder, err := sql.Open("mysql", holderCfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = holder.Close() })
	conn, err := holder.Conn(ctx) // the account's one connection
	if err != nil {
		t.Fatalf("the account's first connection: %v", err)
	}
	t.Cleanup(func() { _ = conn.Close() })

	dsn := "mysql://" + user + ":pw-secret@" + holderCfg.Addr + "/" + cfg.DBName
	assertConnLimit(t, dsn,
		"cannot connect to mysql at "+holderCfg.Addr+": the user "+user+"'s connection limit max_user_connections is reached",
		"raise it (ALTER USER '"+user+"'@'<host>' WITH MAX_USER_CONNECTIONS …) or close idle connections")
}

// portOf is the port of a host:port address.
func portOf(addr string) string {
	if i := strings.LastIndexByte(addr, ':'); i >= 0 {
		return addr[i+1:]
	}
	return "3306"
}
