package oracle

import (
	"context"
	"fmt"
	"strings"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/sqlkit"
)

var _ dialects.BlockerFinder = (*LockAdmin)(nil)

// sessionDate turns a DATE column of the database host's clock (logon_time,
// start_date) into a UTC TIMESTAMP by its distance from SYSDATE, the same
// clock, so no time zone needs naming.
func sessionDate(expr string) string {
	return "(" + sqlNow + " + NUMTODSINTERVAL((" + expr + " - SYSDATE) * 86400, 'SECOND'))"
}

// blockersSQL finds, for the lock tables named in :1 (comma-separated,
// upper case, of the current schema), the sessions other than the
// caller's own that
//
//   - have one of them locked (GV$LOCKED_OBJECT: locked_mode 3, an open
//     transaction holding row locks in it; 6, LOCK TABLE … EXCLUSIVE);
//   - block a session (GV$SESSION.BLOCKING_SESSION) that has one of them
//     locked or is one of schedlock's own (module or program schedlock …).
//
// One row per lock held or session blocked, in sqlkit.ScanBlockers'
// columns, the session id in the form Kill takes ("sid,serial#,@inst_id");
// transaction start from GV$TRANSACTION, statement from GV$SQL. Needs
// SELECT on the GV$ views (SELECT_CATALOG_ROLE).
var blockersSQL = `WITH t AS (
  SELECT o.object_id, o.object_name FROM all_objects o
  WHERE o.owner = SYS_CONTEXT('USERENV', 'CURRENT_SCHEMA') AND o.object_type = 'TABLE'
    AND INSTR(',' || :1 || ',', ',' || o.object_name || ',') > 0
), found AS (
  SELECT lo.inst_id, lo.session_id AS sid,
    CASE lo.locked_mode WHEN 6 THEN 'exclusive lock on ' WHEN 5 THEN 'share row exclusive lock on ' WHEN 4 THEN 'share lock on ' ELSE 'row locks in ' END || t.object_name AS holds,
    t.object_name AS tbl, CAST(NULL AS NUMBER) AS w_inst, CAST(NULL AS NUMBER) AS w_sid, CAST(NULL AS NUMBER) AS w_serial
  FROM gv$locked_object lo JOIN t ON t.object_id = lo.object_id
  WHERE lo.locked_mode >= 3
  UNION ALL
  SELECT w.blocking_instance, w.blocking_session, '', '', w.inst_id, w.sid, w.serial#
  FROM gv$session w
  WHERE w.blocking_session IS NOT NULL AND w.blocking_session_status = 'VALID'
    AND (w.module LIKE 'schedlock%' OR w.program LIKE 'schedlock%'
      OR EXISTS (SELECT 1 FROM gv$locked_object wl JOIN t ON t.object_id = wl.object_id WHERE wl.inst_id = w.inst_id AND wl.session_id = w.sid))
)
SELECT s.sid || ',' || s.serial# || ',@' || s.inst_id, s.username, COALESCE(s.module, s.program), s.machine,
  ` + epochMs(sessionDate("s.logon_time")) + `,
  (SELECT ` + epochMs(sessionDate("MIN(x.start_date)")) + ` FROM gv$transaction x WHERE x.inst_id = s.inst_id AND x.addr = s.taddr),
  s.status || CASE WHEN s.state = 'WAITING' THEN ', waiting on ' || s.event END,
  (SELECT MAX(q.sql_text) FROM gv$sql q WHERE q.inst_id = s.inst_id AND q.sql_id = COALESCE(s.sql_id, s.prev_sql_id)),
  f.holds, f.tbl, CASE WHEN f.w_sid IS NOT NULL THEN f.w_sid || ',' || f.w_serial || ',@' || f.w_inst END,
  ` + epochMs(sqlNow) + `
FROM found f JOIN gv$session s ON s.inst_id = f.inst_id AND s.sid = f.sid
WHERE NOT (s.sid = SYS_CONTEXT('USERENV', 'SID') AND s.inst_id = SYS_CONTEXT('USERENV', 'INSTANCE'))
ORDER BY s.inst_id, s.sid, f.w_sid`

// BlockerStatement is the statement of Blockers, for golden tests.
func BlockerStatement() string { return blockersSQL }

// Blockers implements dialects.BlockerFinder with blockersSQL; unquoted
// table names are matched in upper case, as Oracle stores them. The
// statement that ends a blocker is ALTER SYSTEM KILL SESSION
// 'sid,serial#,@inst_id' IMMEDIATE. It has not been run against a server:
// its shape is kept by a golden file and its columns by a test that reads
// them.
func (a *LockAdmin) Blockers(ctx context.Context, tables []string) ([]dialects.Blocker, error) {
	if len(tables) == 0 {
		tables = dialects.KnownTableNames(nil)
	}
	names := make([]string, len(tables))
	for i, t := range tables {
		names[i] = strings.ToUpper(t[strings.LastIndexByte(t, '.')+1:])
	}
	rows, err := a.DB.QueryContext(ctx, blockersSQL, strings.Join(names, ","))
	if err != nil {
		return nil, dialects.Wrap(Name, "find blockers", fmt.Errorf("read gv$locked_object and gv$session: %w", a.listingError(err)))
	}
	out, err := sqlkit.ScanBlockers(rows, func(id string) string { return "ALTER SYSTEM KILL SESSION '" + id + "' IMMEDIATE" })
	return out, dialects.Wrap(Name, "find blockers", err)
}
