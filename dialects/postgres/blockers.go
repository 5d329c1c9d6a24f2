package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/sqlkit"
)

var _ dialects.BlockerFinder = (*LockAdmin)(nil)

// identPattern is a plain, optionally schema-qualified table name, as
// dialects.ResolveAdminTable accepts it: safe to splice into a statement.
var identPattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_$]{0,62}(\.[A-Za-z_][A-Za-z0-9_$]{0,62})?$`)

// blockersSQL finds the sessions that keep others from the lock tables
// named in $1 (resolved by to_regclass, which takes no lock), other than
// the caller's own:
//
//   - rel: holders of a lock on one of them that conflicts with writing
//     its rows (SHARE and stronger: a migration's ACCESS EXCLUSIVE, an
//     explicit LOCK TABLE);
//   - waits: the sessions pg_blocking_pids names for a session waiting on
//     a lock while it uses one of the tables, or while it is one of
//     schedlock's own connections (application_name schedlock …), unless
//     it waits for an advisory lock (a session lock's holder is named by
//     the lock listing, not as a blocker);
//   - rows: sessions whose open transaction locks a row of one of them,
//     given as the transaction ids in $2 (read from the rows' xmax by
//     rowLockersSQL).
//
// Each with its user, client, application, session and transaction start,
// state and query. %[1]s is pg_locks, %[2]s pg_stat_activity, %[3]s
// pg_backend_pid, %[4]s pg_database.
var blockersSQL = `WITH t AS (
  SELECT c.oid, c.relname::text AS name
  FROM unnest($1::text[]) AS n(name) JOIN pg_class c ON c.oid = to_regclass(n.name)
), rel AS (
  SELECT l.pid, string_agg(DISTINCT l.mode || ' on ' || t.name, ', ') AS holds, min(t.name) AS tbl
  FROM %[1]s l JOIN t ON l.locktype = 'relation' AND l.relation = t.oid
  WHERE l.granted AND l.pid <> %[3]s()
    AND l.database = (SELECT d.oid FROM %[4]s d WHERE d.datname = current_database())
    AND l.mode IN ('ShareLock', 'ShareRowExclusiveLock', 'ExclusiveLock', 'AccessExclusiveLock')
  GROUP BY l.pid
), waits AS (
  SELECT b.pid, string_agg(DISTINCT w.pid::text, ',') AS waiters,
    min((SELECT t.name FROM %[1]s wl JOIN t ON wl.locktype = 'relation' AND wl.relation = t.oid WHERE wl.pid = w.pid LIMIT 1)) AS tbl
  FROM %[2]s w CROSS JOIN LATERAL unnest(pg_blocking_pids(w.pid)) AS b(pid)
  WHERE w.wait_event_type = 'Lock' AND w.pid <> %[3]s()
    AND NOT EXISTS (SELECT 1 FROM %[1]s wl WHERE wl.pid = w.pid AND NOT wl.granted AND wl.locktype = 'advisory')
    AND (w.application_name LIKE 'schedlock%%'
      OR EXISTS (SELECT 1 FROM %[1]s wl JOIN t ON wl.locktype = 'relation' AND wl.relation = t.oid WHERE wl.pid = w.pid))
  GROUP BY b.pid
), rows AS (
  SELECT a.pid, 'row lock in ' || x.tbl AS holds, x.tbl
  FROM %[2]s a JOIN (SELECT split_part(e, ' ', 1) AS xid, split_part(e, ' ', 2) AS tbl FROM unnest($2::text[]) AS e) x
    ON a.backend_xid::text = x.xid
  WHERE a.pid <> %[3]s()
)
SELECT a.pid, COALESCE(a.usename::text, ''), COALESCE(a.application_name, ''),
  COALESCE(host(a.client_addr), CASE WHEN a.client_port = -1 THEN 'local' ELSE '' END),
  ` + epochMsOf("a.backend_start") + `, ` + epochMsOf("a.xact_start") + `,
  COALESCE(a.state, ''), COALESCE(a.query, ''),
  concat_ws(', ', rel.holds, (SELECT string_agg(DISTINCT r.holds, ', ') FROM rows r WHERE r.pid = a.pid)),
  COALESCE(rel.tbl, (SELECT min(r.tbl) FROM rows r WHERE r.pid = a.pid), waits.tbl, ''),
  COALESCE(waits.waiters, ''), ` + epochMsOf("clock_timestamp()") + `
FROM %[2]s a LEFT JOIN rel ON rel.pid = a.pid LEFT JOIN waits ON waits.pid = a.pid
WHERE rel.pid IS NOT NULL OR waits.pid IS NOT NULL OR a.pid IN (SELECT r.pid FROM rows r)
ORDER BY a.pid`

// epochMsOf renders a timestamptz expression as epoch milliseconds (NULL
// stays NULL).
func epochMsOf(expr string) string {
	return "(extract(epoch FROM " + expr + ") * 1000)::bigint"
}

// rowLockersSQL reads the transaction ids that lock a row of table %s (a
// row's xmax is the id of the transaction that locked, updated or deleted
// it; blockersSQL keeps those of transactions still open). It runs under
// a short lock_timeout: a table locked whole is named by rel instead.
const rowLockersSQL = `SELECT DISTINCT xmax::text FROM %s WHERE xmax::text <> '0'`

// rowLockTimeout bounds the read of a table's xmax values.
const rowLockTimeout = "250ms"

// BlockerStatements are the statements of Blockers with the PostgreSQL
// catalog, for golden tests: "blockers" and "row_lockers" (for table
// schedlock).
func BlockerStatements() map[string]string {
	a := &LockAdmin{}
	return map[string]string{"blockers": a.blockersSQL(), "row_lockers": fmt.Sprintf(rowLockersSQL, "schedlock"), "existing_tables": existingTablesSQL}
}

func (a *LockAdmin) blockersSQL() string {
	c := a.catalog()
	return fmt.Sprintf(blockersSQL, c.Locks, c.Activity, c.BackendPID, c.Database)
}

// Blockers implements dialects.BlockerFinder: blockersSQL, fed with the
// open transactions that lock rows of the tables. The statement that ends
// a blocker is SELECT pg_terminate_backend(pid) (sys_terminate_backend on
// KingbaseES). A multixact id in xmax (rows locked FOR SHARE by several
// transactions) is not resolved to its members.
func (a *LockAdmin) Blockers(ctx context.Context, tables []string) ([]dialects.Blocker, error) {
	c := a.catalog()
	if c.Locks == "" || c.Activity == "" || c.BackendPID == "" || c.Database == "" {
		return nil, dialects.Wrap(Name, "find blockers", fmt.Errorf("%w: the server has no pg_locks or pg_stat_activity", dialects.ErrUnsupported))
	}
	if len(tables) == 0 {
		tables = dialects.KnownTableNames(nil)
	}
	existing, err := a.existingTables(ctx, tables)
	if err != nil {
		return nil, dialects.Wrap(Name, "find blockers", err)
	}
	var xids []string
	for _, t := range existing {
		ids, err := a.rowLockers(ctx, t)
		if err != nil {
			return nil, dialects.Wrap(Name, "find blockers", err)
		}
		for _, id := range ids {
			xids = append(xids, id+" "+t)
		}
	}
	rows, err := a.DB.QueryContext(ctx, a.blockersSQL(), textArray(tables), textArray(xids))
	if err != nil {
		return nil, dialects.Wrap(Name, "find blockers", fmt.Errorf("read %s: %w", c.Locks, err))
	}
	defer rows.Close()
	out := []dialects.Blocker{}
	for rows.Next() {
		var (
			pid                                    int64
			user, app, client, state, query, holds string
			table, waiters                         string
			since, txStart, dbNow                  sql.NullInt64
		)
		if err := rows.Scan(&pid, &user, &app, &client, &since, &txStart, &state, &query, &holds, &table, &waiters, &dbNow); err != nil {
			return nil, dialects.Wrap(Name, "find blockers", err)
		}
		b := dialects.Blocker{
			Holder:  dialects.Holder{SessionID: strconv.FormatInt(pid, 10), User: user, Client: client, Application: app, Since: sqlkit.NullMillis(since)},
			TxStart: sqlkit.NullMillis(txStart), State: state, Query: query, Holds: holds, Table: table,
			DBNow: sqlkit.NullMillis(dbNow),
		}
		if waiters != "" {
			b.Waiters = strings.Split(waiters, ",")
			sort.Strings(b.Waiters)
		}
		if c.Terminate != "" {
			b.Terminate = fmt.Sprintf("SELECT %s(%d)", c.Terminate, pid)
		}
		out = append(out, b)
	}
	if err := rows.Err(); err != nil {
		return nil, dialects.Wrap(Name, "find blockers", err)
	}
	return out, nil
}

// existingTablesSQL keeps the names in $1 that resolve to a relation
// (to_regclass takes no lock).
const existingTablesSQL = `SELECT n FROM unnest($1::text[]) AS n WHERE to_regclass(n) IS NOT NULL`

// existingTables keeps the tables that exist, in one round trip, so that
// the known tables a database lacks cost no transaction each.
func (a *LockAdmin) existingTables(ctx context.Context, tables []string) ([]string, error) {
	rows, err := a.DB.QueryContext(ctx, existingTablesSQL, textArray(tables))
	if err != nil {
		return nil, fmt.Errorf("find the lock tables: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, rows.Err()
}

// rowLockers reads the xmax values of table's rows in a transaction with a
// short lock_timeout. A table that does not exist or cannot be read now
// (locked whole, no privilege) has none: the whole-table lock is named by
// blockersSQL, and a table nobody can read blocks nobody's lock.
func (a *LockAdmin) rowLockers(ctx context.Context, table string) ([]string, error) {
	if !identPattern.MatchString(table) {
		return nil, dialects.Invalidf("table name %q is not a plain identifier", table)
	}
	tx, err := a.DB.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx, "SET LOCAL lock_timeout = '"+rowLockTimeout+"'"); err != nil {
		return nil, err
	}
	rows, err := tx.QueryContext(ctx, fmt.Sprintf(rowLockersSQL, table))
	switch {
	case hasCode(err, codeLockNotAvailable), hasCode(err, codeUndefinedTable), hasCode(err, codeInsufficientPrivilege):
		return nil, nil
	case err != nil:
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
			return nil, err
		}
		return nil, fmt.Errorf("read the row locks of %s: %w", table, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, rows.Err()
}

// textArray is a text[] literal of values for a $n::text[] parameter.
func textArray(values []string) string {
	quoted := make([]string, len(values))
	for i, v := range values {
		quoted[i] = `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(v) + `"`
	}
	return "{" + strings.Join(quoted, ",") + "}"
}
