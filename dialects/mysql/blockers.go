package mysql

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/sqlkit"
)

var _ dialects.BlockerFinder = (*LockAdmin)(nil)

// blockerColumns are the columns every blocker statement returns, %s being
// the views they read: the blocking connection, its user, client, an empty
// program name (programNamesSQL reads it apart: performance_schema may be
// closed to a user who may read InnoDB's views), command and state, transaction start and statement; the
// waiting connection (NULL for a holder nobody waits for yet), the table
// as `schema`.`table`, the lock mode; the database's now.
const blockerColumns = `SELECT b.trx_mysql_thread_id, COALESCE(p.USER, ''), COALESCE(p.HOST, ''), '',
  COALESCE(p.COMMAND, ''), COALESCE(p.STATE, ''),
  TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', CONVERT_TZ(b.trx_started, @@session.time_zone, '+00:00')) DIV 1000,
  COALESCE(b.trx_query, p.INFO, ''), %s, %s, %s,
  ` + nowMs

// innodbWaitsSQL lists the lock waits of MariaDB and MySQL 5.7
// (information_schema.INNODB_LOCK_WAITS, whose locks INNODB_LOCKS shows
// only while someone waits for them): one row per waiter and blocker. A
// blocker that waits itself (a queued request ahead of the waiter) is left
// out: the session to end is the one at the head of the queue.
var innodbWaitsSQL = fmt.Sprintf(blockerColumns, "r.trx_mysql_thread_id", "l.lock_table", "l.lock_mode") + `
FROM information_schema.INNODB_LOCK_WAITS w
JOIN information_schema.INNODB_TRX b ON b.trx_id = w.blocking_trx_id
JOIN information_schema.INNODB_TRX r ON r.trx_id = w.requesting_trx_id
JOIN information_schema.INNODB_LOCKS l ON l.lock_id = w.blocking_lock_id
LEFT JOIN information_schema.PROCESSLIST p ON p.ID = b.trx_mysql_thread_id
WHERE b.trx_mysql_thread_id <> CONNECTION_ID() AND b.trx_state <> 'LOCK WAIT'
ORDER BY b.trx_mysql_thread_id, r.trx_mysql_thread_id`

// dataLocksSQL lists, on MySQL 8 (performance_schema.data_locks, which
// shows every InnoDB lock), the lock waits and the exclusive row and
// table locks held on tables of the current database, waited for or not.
var dataLocksSQL = fmt.Sprintf(blockerColumns, "r.trx_mysql_thread_id", "CONCAT('`', l.OBJECT_SCHEMA, '`.`', l.OBJECT_NAME, '`')", "l.LOCK_MODE") + `
FROM performance_schema.data_lock_waits w
JOIN information_schema.INNODB_TRX b ON b.trx_id = w.BLOCKING_ENGINE_TRANSACTION_ID
JOIN information_schema.INNODB_TRX r ON r.trx_id = w.REQUESTING_ENGINE_TRANSACTION_ID
JOIN performance_schema.data_locks l ON l.ENGINE_LOCK_ID = w.BLOCKING_ENGINE_LOCK_ID
LEFT JOIN information_schema.PROCESSLIST p ON p.ID = b.trx_mysql_thread_id
WHERE b.trx_mysql_thread_id <> CONNECTION_ID() AND b.trx_state <> 'LOCK WAIT'
UNION ALL
` + fmt.Sprintf(blockerColumns, "NULL", "CONCAT('`', l.OBJECT_SCHEMA, '`.`', l.OBJECT_NAME, '`')", "l.LOCK_MODE") + `
FROM performance_schema.data_locks l
JOIN information_schema.INNODB_TRX b ON b.trx_id = l.ENGINE_TRANSACTION_ID
LEFT JOIN information_schema.PROCESSLIST p ON p.ID = b.trx_mysql_thread_id
WHERE l.OBJECT_SCHEMA = DATABASE() AND b.trx_mysql_thread_id <> CONNECTION_ID()
  AND (l.LOCK_TYPE = 'RECORD' AND l.LOCK_MODE LIKE 'X%%' OR l.LOCK_TYPE = 'TABLE' AND l.LOCK_MODE IN ('X', 'S'))
ORDER BY 1, 9`

// probeSQL waits, for at most a second, for a shared lock on every row of
// table %s: a row another transaction locks makes it wait, and the wait
// shows that transaction in INNODB_LOCK_WAITS (MariaDB). It runs in a READ
// COMMITTED transaction (no gap locks) that is rolled back at once.
const probeSQL = "SET STATEMENT innodb_lock_wait_timeout = 1 FOR SELECT COUNT(*) FROM %s LOCK IN SHARE MODE"

// probePoll is the pause between reads of the lock waits while a probe
// waits. InnoDB refreshes the snapshot behind its information_schema views
// only when they have not been read for 100 ms, so reading them more often
// would keep showing the snapshot from before the wait.
const probePoll = 150 * time.Millisecond

// probeTimeout bounds one probe, its wait of a second included.
const probeTimeout = 3 * time.Second

// BlockerStatements are the statements of Blockers, for golden tests:
// "innodb_waits" (MariaDB, MySQL 5.7), "data_locks" (MySQL 8) and "probe"
// (MariaDB, for table schedlock).
func BlockerStatements() map[string]string {
	return map[string]string{"innodb_waits": innodbWaitsSQL, "data_locks": dataLocksSQL, "probe": fmt.Sprintf(probeSQL, "schedlock"), "program_names": fmt.Sprintf(programNamesSQL, "42")}
}

// identPattern is a plain, optionally schema-qualified table name.
var identPattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_$]{0,62}(\.[A-Za-z_][A-Za-z0-9_$]{0,62})?$`)

// Blockers implements dialects.BlockerFinder. MySQL 8 reads
// performance_schema.data_locks and data_lock_waits: every exclusive lock
// on a row or a table of tables and every wait for one. MariaDB and MySQL
// 5.7 show a lock only while someone waits for it
// (information_schema.INNODB_LOCK_WAITS); on MariaDB, Blockers waits for
// the rows of each table itself (probeSQL) to see who locks them. The
// statement that ends a blocker is KILL id. Blocks by a metadata lock
// (ALTER TABLE, LOCK TABLES) are not named: InnoDB's views do not show
// them.
func (a *LockAdmin) Blockers(ctx context.Context, tables []string) ([]dialects.Blocker, error) {
	if len(tables) == 0 {
		tables = dialects.KnownTableNames(nil)
	}
	for _, t := range tables {
		if !identPattern.MatchString(t) {
			return nil, dialects.Wrap(Name, "find blockers", dialects.Invalidf("table name %q is not a plain identifier", t))
		}
	}
	var db string
	if err := a.DB.QueryRowContext(ctx, "SELECT COALESCE(DATABASE(), '')").Scan(&db); err != nil {
		return nil, dialects.Wrap(Name, "find blockers", err)
	}
	want := map[string]string{} // `schema`.`table`, lower case → table as given
	for _, t := range tables {
		schema, name := db, t
		if i := strings.IndexByte(t, '.'); i >= 0 {
			schema, name = t[:i], t[i+1:]
		}
		want[strings.ToLower("`"+schema+"`.`"+name+"`")] = t
	}
	mysql8 := a.Info.Product == dialects.ProductMySQL && versionAtLeast(a.Info.Version, 8, 0, 1)
	query := innodbWaitsSQL
	if mysql8 {
		query = dataLocksSQL
	}
	found := map[string]*dialects.Blocker{}
	if _, err := a.readBlockers(ctx, query, want, "", found); err != nil {
		return nil, dialects.Wrap(Name, "find blockers", err)
	}
	if a.Info.Product == dialects.ProductMariaDB {
		for _, t := range tables {
			if err := a.probe(ctx, t, want, found); err != nil {
				return nil, dialects.Wrap(Name, "find blockers", err)
			}
		}
	}
	a.programNames(ctx, found)
	out := make([]dialects.Blocker, 0, len(found))
	for _, b := range found {
		sort.Strings(b.Waiters)
		out = append(out, *b)
	}
	sort.Slice(out, func(i, j int) bool {
		x, _ := strconv.ParseInt(out[i].SessionID, 10, 64)
		y, _ := strconv.ParseInt(out[j].SessionID, 10, 64)
		return x < y
	})
	return out, nil
}

// readBlockers runs query and adds, to found, the blockers of a lock on
// one of the tables in want; a waiter that is probeID (the probe's own
// connection) is not listed as a waiter, and saw reports whether it was
// among them.
func (a *LockAdmin) readBlockers(ctx context.Context, query string, want map[string]string, probeID string, found map[string]*dialects.Blocker) (saw bool, err error) {
	rows, err := a.DB.QueryContext(ctx, query)
	if err != nil {
		return false, fmt.Errorf("read the lock waits: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			id                                 int64
			user, host, app, command, state, q string
			waiter                             sql.NullInt64
			table, mode                        sql.NullString
			txStart, dbNow                     sql.NullInt64
		)
		if err := rows.Scan(&id, &user, &host, &app, &command, &state, &txStart, &q, &waiter, &table, &mode, &dbNow); err != nil {
			return false, fmt.Errorf("read the lock waits: %w", err)
		}
		given, ok := want[strings.ToLower(table.String)]
		if !ok {
			continue
		}
		sid := strconv.FormatInt(id, 10)
		b := found[sid]
		if b == nil {
			b = &dialects.Blocker{
				Holder:  dialects.Holder{SessionID: sid, User: user, Client: host, Application: app},
				TxStart: sqlkit.NullMillis(txStart), State: strings.TrimSpace(command + " " + state), Query: q,
				Table: given, Terminate: "KILL " + sid, DBNow: sqlkit.NullMillis(dbNow),
			}
			found[sid] = b
		}
		holds := fmt.Sprintf("%s lock in %s", mode.String, given)
		if mode.String == "" {
			holds = "lock in " + given
		}
		if !strings.Contains(b.Holds, holds) {
			b.Holds = strings.TrimPrefix(b.Holds+", "+holds, ", ")
		}
		w := strconv.FormatInt(waiter.Int64, 10)
		switch {
		case !waiter.Valid:
		case w == probeID:
			saw = true
		case !slices.Contains(b.Waiters, w):
			b.Waiters = append(b.Waiters, w)
		}
	}
	if err := rows.Err(); err != nil {
		return false, fmt.Errorf("read the lock waits: %w", err)
	}
	return saw, nil
}

// probe waits for the rows of table on a connection of its own (probeSQL)
// and, while it waits, reads who it waits for; it stops once it has seen
// them, or when its wait ends (nobody locks a row, or its second ran out).
// A table that does not exist or cannot be read is passed over.
func (a *LockAdmin) probe(ctx context.Context, table string, want map[string]string, found map[string]*dialects.Blocker) error {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	conn, err := a.DB.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	var id int64
	if err := conn.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&id); err != nil {
		return err
	}
	if _, err := conn.ExecContext(ctx, "SET TRANSACTION ISOLATION LEVEL READ COMMITTED"); err != nil {
		return err
	}
	if _, err := conn.ExecContext(ctx, "START TRANSACTION"); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() {
		rows, err := conn.QueryContext(ctx, fmt.Sprintf(probeSQL, table))
		if err == nil {
			for rows.Next() {
			}
			err = rows.Err()
			_ = rows.Close()
		}
		done <- err
	}()
	// The probe's statement ends by itself within its second; cancelling
	// it would close the connection and leave the server waiting on.
	finish := func() error {
		err := <-done
		if _, rbErr := conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK"); rbErr != nil {
			_ = conn.Raw(func(any) error { return driver.ErrBadConn }) // never back to the pool mid-transaction
		}
		return err
	}
	probeID := strconv.FormatInt(id, 10)
	tick := time.NewTicker(probePoll)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			done <- err
			err = finish()
			switch {
			case err == nil, isLockWaitTimeout(err), isMissingOrDenied(err), ctx.Err() != nil:
				return nil
			}
			return fmt.Errorf("wait for the rows of %s: %w", table, err)
		case <-tick.C:
			saw, err := a.readBlockers(ctx, innodbWaitsSQL, want, probeID, found)
			if err != nil || saw {
				_ = finish()
				return err
			}
		case <-ctx.Done():
			_ = finish()
			return nil
		}
	}
}

// isLockWaitTimeout reports a lock wait that ran out (1205).
func isLockWaitTimeout(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && me.Number == errLockWaitTimeout
}

// isMissingOrDenied reports a table that does not exist (1146) or may not
// be read (1142).
func isMissingOrDenied(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && (me.Number == errNoSuchTable || me.Number == errTableAccessDenied)
}

// programNamesSQL reads the program names the clients of the connections
// in %s announced.
const programNamesSQL = `SELECT PROCESSLIST_ID, ATTR_VALUE FROM performance_schema.session_connect_attrs
WHERE ATTR_NAME = 'program_name' AND PROCESSLIST_ID IN (%s)`

// programNames fills the Application of the blockers in found from
// performance_schema, where the server keeps connection attributes and
// the user may read them; otherwise they stay empty.
func (a *LockAdmin) programNames(ctx context.Context, found map[string]*dialects.Blocker) {
	if len(found) == 0 {
		return
	}
	ids := make([]string, 0, len(found))
	for id := range found {
		if _, err := strconv.ParseInt(id, 10, 64); err == nil {
			ids = append(ids, id)
		}
	}
	rows, err := a.DB.QueryContext(ctx, fmt.Sprintf(programNamesSQL, strings.Join(ids, ", ")))
	if err != nil {
		return
	}
	defer rows.Close()
	for rows.Next() {
		var id, name string
		if rows.Scan(&id, &name) == nil && found[id] != nil {
			found[id].Application = name
		}
	}
}
