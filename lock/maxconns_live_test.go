package lock

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestMaxConnsLive: a handle opened with x-max-conns=3 never has more than
// three connections on the server, counted by the server itself while 64
// jobs take, refresh and release locks at once on both strategies — and
// every job keeps its lock.
func TestMaxConnsLive(t *testing.T) {
	servers := map[string]struct {
		env, driver, nameParam, count string
	}{
		"postgres": {"SCHEDLOCK_TEST_POSTGRES_DSN", "pgx", "application_name=%s",
			"SELECT count(*) FROM pg_stat_activity WHERE application_name = $1"},
		"mysql": {"SCHEDLOCK_TEST_MYSQL_DSN", "mysql", "connectionAttributes=program_name:%s",
			"SELECT COUNT(DISTINCT PROCESSLIST_ID) FROM performance_schema.session_connect_attrs WHERE ATTR_NAME = 'program_name' AND ATTR_VALUE = ?"},
	}
	for backend, s := range servers {
		raw := os.Getenv(s.env)
		if raw == "" {
			t.Logf("%s not set: no %s run", s.env, backend)
			continue
		}
		for _, strategy := range []Strategy{StrategySession, StrategyTable} {
			t.Run(backend+"/"+string(strategy), func(t *testing.T) {
				app := fmt.Sprintf("sl-maxconns-%d", time.Now().UnixNano()%1e9)
				dsn := withOption(withOption(withOption(raw, fmt.Sprintf(s.nameParam, app)), "x-max-conns=3"), "x-strategy="+string(strategy))
				if strategy == StrategyTable {
					dsn = withOption(dsn, "x-table=sl_maxconns_"+app[len("sl-maxconns-"):])
				}
				db := openT(t, dsn)
				ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
				defer cancel()
				if strategy == StrategyTable {
					if err := db.CreateTable(ctx); err != nil {
						t.Fatal(err)
					}
				}
				admin, err := sql.Open(s.driver, raw)
				if err != nil {
					t.Fatal(err)
				}
				defer admin.Close()
				if strategy == StrategyTable {
					defer admin.Exec("DROP TABLE IF EXISTS sl_maxconns_" + app[len("sl-maxconns-"):])
				}
				var most atomic.Int64
				stop := make(chan struct{})
				sampled := make(chan error, 1)
				go func() {
					for {
						var n int64
						if err := admin.QueryRowContext(ctx, s.count, app).Scan(&n); err != nil {
							sampled <- err
							return
						}
						if n > most.Load() {
							most.Store(n)
						}
						select {
						case <-stop:
							sampled <- nil
							return
						case <-time.After(20 * time.Millisecond):
						}
					}
				}()
				var wg sync.WaitGroup
				errs := make([]error, 64)
				for i := range errs {
					wg.Go(func() {
						errs[i] = WithLock(ctx, db, fmt.Sprintf("maxconns-%d", i), Options{AtMost: 3 * time.Second},
							func(ctx context.Context, lease Lease) error {
								select {
								case <-ctx.Done():
									return context.Cause(ctx)
								case <-time.After(2500 * time.Millisecond): // past two refreshes
									return nil
								}
							})
					})
				}
				wg.Wait()
				close(stop)
				if err := <-sampled; err != nil {
					t.Fatalf("count the handle's connections: %v", err)
				}
				for i, err := range errs {
					if err != nil {
						t.Errorf("job %d: %v", i, err)
					}
				}
				if n := most.Load(); n < 1 || n > 3 {
					t.Errorf("the server saw up to %d connections of the handle, want 1 to 3 (x-max-conns=3)", n)
				}
			})
		}
	}
}
