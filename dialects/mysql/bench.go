package mysql

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/go-sql-driver/mysql"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/benchops"
)

var _ benchops.SessionBaseline = (*Backend)(nil)

// The Backend gives `schedlock bench` its raw baselines as methods, which
// the harness finds on the opened backend (the contract of package
// dialects/benchops): the raw GET_LOCK statements the session locker
// competes with, on a driver connection of their own, a count of the connections
// holding a set of GET_LOCK names by IS_USED_LOCK, which needs neither
// performance_schema nor a plugin, and the claim a developer writes by
// hand (claimbench.go).

// holderBatch is how many names one IS_USED_LOCK statement asks about.
const holderBatch = 500

// RawSession implements benchops.SessionBaseline: one connection of
// go-sql-driver/mysql of its own (its driver.Conn, not database/sql),
// opened with the configuration of the backend's pool (interpolateParams
// and every other setting alike), running the GET_LOCK statements a
// developer writes by hand: SELECT GET_LOCK(?, 0), SELECT
// RELEASE_LOCK(?), SELECT GET_LOCK(?, seconds) for a wait, and SELECT 1,
// on the scoped name of each lock (LockName).
func (b *Backend) RawSession(ctx context.Context) (benchops.SessionOps, error) {
	cfg, err := b.driverConfig(ctx)
	if err != nil {
		return benchops.SessionOps{}, err
	}
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return benchops.SessionOps{}, dialects.Wrap(Name, "raw session", err)
	}
	dc, err := connector.Connect(ctx)
	if err != nil {
		return benchops.SessionOps{}, dialects.Wrap(Name, "raw session", err)
	}
	q, ok := dc.(driver.QueryerContext)
	if !ok {
		_ = dc.Close()
		return benchops.SessionOps{}, dialects.Wrap(Name, "raw session", fmt.Errorf("%w: the driver connection cannot query", dialects.ErrUnsupported))
	}
	raw := &rawConn{conn: dc, q: q}
	mariadb := b.Info.Product == dialects.ProductMariaDB
	return benchops.SessionOps{
		RoundTrip: func(ctx context.Context) error {
			_, _, err := raw.int(ctx, "SELECT 1")
			return err
		},
		TryLock: func(ctx context.Context, name string) (bool, error) {
			n, _, err := raw.int(ctx, "SELECT GET_LOCK(?, 0)", LockName(b.Database, name))
			return n == 1, err
		},
		Unlock: func(ctx context.Context, name string) (bool, error) {
			n, _, err := raw.int(ctx, "SELECT RELEASE_LOCK(?)", LockName(b.Database, name))
			return n == 1, err
		},
		Lock: func(ctx context.Context, name string, wait time.Duration) (bool, error) {
			secs := wait.Seconds()
			if !mariadb {
				secs = math.Ceil(secs) // MySQL takes whole seconds
			}
			n, _, err := raw.int(ctx, "SELECT GET_LOCK(?, ?)", LockName(b.Database, name), secs)
			return n == 1, err
		},
		Close: dc.Close,
	}, nil
}

// rawConn runs the raw statements on one driver connection.
type rawConn struct {
	conn driver.Conn
	q    driver.QueryerContext
	// stmts are the statements prepared where the driver would not run
	// them as text (interpolateParams off), as database/sql would.
	stmts map[string]driver.Stmt
}

// int runs query with args and reads its one integer (valid false for
// NULL).
func (r *rawConn) int(ctx context.Context, query string, args ...driver.Value) (int64, bool, error) {
	named := make([]driver.NamedValue, len(args))
	for i, a := range args {
		named[i] = driver.NamedValue{Ordinal: i + 1, Value: a}
	}
	var rows driver.Rows
	var err error
	if st, ok := r.stmts[query]; ok {
		rows, err = st.(driver.StmtQueryContext).QueryContext(ctx, named)
	} else if rows, err = r.q.QueryContext(ctx, query, named); errors.Is(err, driver.ErrSkip) {
		var st driver.Stmt
		if st, err = r.conn.(driver.ConnPrepareContext).PrepareContext(ctx, query); err == nil {
			if r.stmts == nil {
				r.stmts = map[string]driver.Stmt{}
			}
			r.stmts[query] = st
			rows, err = st.(driver.StmtQueryContext).QueryContext(ctx, named)
		}
	}
	if err != nil {
		return 0, false, err
	}
	dest := []driver.Value{nil}
	err = rows.Next(dest)
	if cerr := rows.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, false, err
	}
	switch v := dest[0].(type) {
	case int64:
		return v, true, nil
	case []byte:
		n, err := strconv.ParseInt(string(v), 10, 64)
		return n, err == nil, err
	case nil:
		return 0, false, nil
	default:
		return 0, false, fmt.Errorf("unexpected %T", v)
	}
}

// driverConfig is the go-sql-driver configuration of the backend's pool,
// read from a pooled connection (the driver keeps it in an unexported
// field, read by reflection as NetConn reads the socket).
func (b *Backend) driverConfig(ctx context.Context) (*mysql.Config, error) {
	conn, err := b.SQL.Conn(ctx)
	if err != nil {
		return nil, dialects.Wrap(Name, "raw session", err)
	}
	defer conn.Close()
	var cfg *mysql.Config
	_ = conn.Raw(func(dc any) error {
		v := reflect.ValueOf(dc)
		if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
			return nil
		}
		f := v.Elem().FieldByName("cfg")
		if !f.IsValid() || f.Kind() != reflect.Pointer || f.IsNil() {
			return nil
		}
		if c, ok := reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem().Interface().(*mysql.Config); ok {
			cfg = c.Clone()
		}
		return nil
	})
	if cfg == nil {
		return nil, dialects.Wrap(Name, "raw session", fmt.Errorf("%w: the pool's driver connection is not go-sql-driver's", dialects.ErrUnsupported))
	}
	return cfg, nil
}

// CountHoldingSessions counts the distinct connection ids IS_USED_LOCK
// reports for LockName of names in b.Database, on conn.
func (b *Backend) CountHoldingSessions(ctx context.Context, conn *sql.Conn, names []string) (int, error) {
	ids := map[int64]bool{}
	for start := 0; start < len(names); start += holderBatch {
		batch := names[start:min(start+holderBatch, len(names))]
		args := make([]any, len(batch))
		for i, n := range batch {
			args[i] = LockName(b.Database, n)
		}
		rows, err := conn.QueryContext(ctx, holdingSessionsSQL(len(batch)), args...)
		if err != nil {
			return 0, dialects.Wrap(Name, "count lock holders", fmt.Errorf("IS_USED_LOCK: %w", err))
		}
		for rows.Next() {
			var id sql.NullInt64
			if err := rows.Scan(&id); err != nil {
				_ = rows.Close()
				return 0, dialects.Wrap(Name, "count lock holders", err)
			}
			if id.Valid {
				ids[id.Int64] = true
			}
		}
		if err := rows.Close(); err != nil {
			return 0, dialects.Wrap(Name, "count lock holders", err)
		}
		if err := rows.Err(); err != nil {
			return 0, dialects.Wrap(Name, "count lock holders", err)
		}
	}
	return len(ids), nil
}

// holdingSessionsSQL asks for the distinct holders of n names.
func holdingSessionsSQL(n int) string {
	return strings.Repeat("SELECT IS_USED_LOCK(?) UNION ", n-1) + "SELECT IS_USED_LOCK(?)"
}
