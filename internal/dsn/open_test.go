package dsn

import (
	"context"
	"errors"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
	_ "github.com/schedlock/schedlock/dialects/mysql"
	_ "github.com/schedlock/schedlock/dialects/postgres"
	"github.com/schedlock/schedlock/internal/livetest"
	"github.com/schedlock/schedlock/internal/testnet"
)

const testPassword = "s3cr3t-P@ss"

// escapedPassword is testPassword as written in a URL.
var escapedPassword = url.QueryEscape(testPassword)

func TestConnectSQLite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "locks.db")
	d, err := Parse(path)
	if err != nil {
		t.Fatal(err)
	}
	db, err := d.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if info := db.Detected(); info.Product != dialects.ProductSQLite || info.Version == "" {
		t.Errorf("detected %+v", info)
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("database file not created: %v", err)
	}
}

func TestConnectSQLiteMissingDirectory(t *testing.T) {
	d, err := Parse(filepath.Join(t.TempDir(), "no", "such", "locks.db"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = d.Connect(context.Background())
	var ce *ConnectError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "does not exist") || !strings.Contains(err.Error(), "create the directory") {
		t.Errorf("error = %v", err)
	}
}

func TestConnectRefused(t *testing.T) {
	for _, scheme := range []string{"postgres", "mysql"} {
		t.Run(scheme, func(t *testing.T) {
			addr := testnet.FreeAddr(t)
			d, err := Parse(scheme + "://app:" + escapedPassword + "@" + addr + "/jobs")
			if err != nil {
				t.Fatal(err)
			}
			_, err = d.Connect(context.Background())
			want := "cannot connect to " + scheme + " at " + addr + ": connection refused — is the server running?"
			if err == nil || err.Error() != want {
				t.Errorf("error = %v\nwant    %s", err, want)
			}
			assertNoSecret(t, err.Error(), testPassword)
		})
	}
}

// TestConnectTimeout dials a loopback listener that accepts and never
// answers, so only the context ends the attempt.
func TestConnectTimeout(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	d, err := Parse("postgres://app:" + escapedPassword + "@" + l.Addr().String() + "/jobs?sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = d.Connect(ctx)
	if err == nil || !strings.Contains(err.Error(), "timed out — is the host reachable?") {
		t.Errorf("error = %v", err)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error does not match context.DeadlineExceeded: %v", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("Connect took %s despite a 300ms deadline", took)
	}
	assertNoSecret(t, err.Error(), testPassword)
}

func TestConnectCancelled(t *testing.T) {
	d, err := Parse("postgres://app@" + testnet.FreeAddr(t) + "/jobs")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := d.Connect(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("error = %v, want context.Canceled", err)
	}
}

// liveURL returns the env DSN as a URL with user, password and database
// replaced, or skips when the variable is unset.
func livePostgres(t *testing.T) *url.URL {
	t.Helper()
	raw := livetest.DSN(t, livetest.Postgres)
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatalf("SCHEDLOCK_TEST_POSTGRES_DSN: %v", err)
	}
	return u
}

// liveMySQLHost returns host:port of SCHEDLOCK_TEST_MYSQL_DSN, or skips.
func liveMySQLHost(t *testing.T) string {
	t.Helper()
	raw := livetest.DSN(t, livetest.MySQL)
	d, err := Parse(raw)
	if err != nil {
		t.Fatalf("SCHEDLOCK_TEST_MYSQL_DSN: %v", err)
	}
	return d.Where
}

func TestConnectLive(t *testing.T) {
	t.Run("postgres", func(t *testing.T) {
		u := livePostgres(t)
		d, err := Parse(u.String())
		if err != nil {
			t.Fatal(err)
		}
		db, err := d.Connect(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if info := db.Detected(); info.Dialect != "postgres" || info.Product == "" {
			t.Errorf("detected %+v", info)
		}
	})
	t.Run("mysql", func(t *testing.T) {
		liveMySQLHost(t)
		d, err := Parse(os.Getenv("SCHEDLOCK_TEST_MYSQL_DSN"))
		if err != nil {
			t.Fatal(err)
		}
		db, err := d.Connect(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if info := db.Detected(); info.Dialect != "mysql" || info.Product == "" {
			t.Errorf("detected %+v", info)
		}
	})
}

func TestConnectLiveAuthErrorsHidePassword(t *testing.T) {
	t.Run("postgres unknown role", func(t *testing.T) {
		u := livePostgres(t)
		u.User = url.UserPassword("schedlock_no_such_role", testPassword)
		u.Path = "/nonexistent_db"
		d, err := Parse(u.String())
		if err != nil {
			t.Fatal(err)
		}
		_, err = d.Connect(context.Background())
		if err == nil {
			t.Fatal("connecting as a role that does not exist succeeded")
		}
		if !strings.Contains(err.Error(), "cannot connect to postgres at") || !strings.Contains(err.Error(), "schedlock_no_such_role") {
			t.Errorf("error = %v", err)
		}
		assertNoSecret(t, err.Error(), testPassword)
	})
	t.Run("postgres unknown database", func(t *testing.T) {
		u := livePostgres(t)
		u.Path = "/schedlock_no_such_db"
		u.User = url.UserPassword(u.User.Username(), testPassword)
		d, err := Parse(u.String())
		if err != nil {
			t.Fatal(err)
		}
		_, err = d.Connect(context.Background())
		if err == nil || !strings.Contains(err.Error(), "create the database or name another one") {
			t.Errorf("error = %v", err)
		}
		if err != nil {
			assertNoSecret(t, err.Error(), testPassword)
		}
	})
	t.Run("mysql wrong password", func(t *testing.T) {
		host := liveMySQLHost(t)
		d, err := Parse("mysql://schedlock_no_such_user:" + escapedPassword + "@" + host + "/test")
		if err != nil {
			t.Fatal(err)
		}
		_, err = d.Connect(context.Background())
		if err == nil || !strings.Contains(err.Error(), "check the user name and password") {
			t.Errorf("error = %v", err)
		}
		if err != nil {
			assertNoSecret(t, err.Error(), testPassword)
		}
	})
}
