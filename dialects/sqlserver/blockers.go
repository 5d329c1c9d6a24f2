package sqlserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/sqlkit"
)

var _ dialects.BlockerFinder = (*LockAdmin)(nil)

// localToUTC moves a local server datetime to UTC by the server's current
// offset (whole minutes), as listSQL does.
func localToUTC(expr string) string {
	return "DATEADD(minute, DATEDIFF(minute, GETDATE(), GETUTCDATE()), " + expr + ")"
}

// blockersSQL finds, for the lock tables named comma-separated in @p1
// (resolved by OBJECT_ID in the current database), the sessions other
// than the caller's own that
//
//   - hold a lock on one of them that keeps writers out (S, SIX, X, Sch-M
//     on the table: TABLOCKX, ALTER TABLE), or an X or U lock on one of
//     its rows, keys or pages (an open transaction that updated it or read
//     it WITH (UPDLOCK));
//   - block a request (sys.dm_exec_requests.blocking_session_id) of a
//     session that uses one of the tables or is one of schedlock's own
//     (program name schedlock …).
//
// One row per lock held or session blocked, in sqlkit.ScanBlockers' columns:
// login and last statement from sys.dm_exec_sessions, sys.dm_exec_connections
// and sys.dm_exec_sql_text, the transaction's begin from
// sys.dm_tran_active_transactions. Needs VIEW SERVER STATE (VIEW SERVER
// PERFORMANCE STATE on SQL Server 2022) to see other sessions.
var blockersSQL = `WITH t AS (
  SELECT value AS name, OBJECT_ID(value) AS object_id FROM STRING_SPLIT(@p1, N',') WHERE OBJECT_ID(value) IS NOT NULL
), found AS (
  SELECT l.request_session_id AS session_id, l.request_mode + N' lock on ' + t.name AS holds, t.name AS tbl, CAST(NULL AS int) AS waiter
  FROM sys.dm_tran_locks AS l JOIN t ON l.resource_type = N'OBJECT' AND l.resource_associated_entity_id = t.object_id
  WHERE l.resource_database_id = DB_ID() AND l.request_status = N'GRANT' AND l.request_mode IN (N'S', N'SIX', N'X', N'Sch-M')
  UNION ALL
  SELECT l.request_session_id, l.request_mode + N' ' + l.resource_type + N' lock in ' + t.name, t.name, NULL
  FROM sys.dm_tran_locks AS l
  JOIN sys.partitions AS p ON p.hobt_id = l.resource_associated_entity_id
  JOIN t ON t.object_id = p.object_id
  WHERE l.resource_database_id = DB_ID() AND l.request_status = N'GRANT'
    AND l.resource_type IN (N'KEY', N'RID', N'PAGE') AND l.request_mode IN (N'X', N'U')
  UNION ALL
  SELECT r.blocking_session_id, N'', COALESCE((SELECT TOP (1) t.name FROM sys.dm_tran_locks AS wl JOIN t ON wl.resource_type = N'OBJECT'
      AND wl.resource_associated_entity_id = t.object_id WHERE wl.request_session_id = r.session_id AND wl.resource_database_id = DB_ID()), N''), r.session_id
  FROM sys.dm_exec_requests AS r JOIN sys.dm_exec_sessions AS ws ON ws.session_id = r.session_id
  WHERE r.blocking_session_id > 0 AND r.session_id <> @@SPID
    AND (ws.program_name LIKE N'schedlock%' OR EXISTS (SELECT 1 FROM sys.dm_tran_locks AS wl JOIN t ON wl.resource_type = N'OBJECT'
      AND wl.resource_associated_entity_id = t.object_id WHERE wl.request_session_id = r.session_id AND wl.resource_database_id = DB_ID()))
)
SELECT CAST(f.session_id AS nvarchar(11)), s.login_name, s.program_name, COALESCE(c.client_net_address, s.host_name),
  ` + epochMs(localToUTC("s.login_time")) + `,
  (SELECT MIN(` + epochMs(localToUTC("at.transaction_begin_time")) + `) FROM sys.dm_tran_session_transactions AS st
     JOIN sys.dm_tran_active_transactions AS at ON at.transaction_id = st.transaction_id WHERE st.session_id = f.session_id),
  s.status, txt.text, f.holds, f.tbl, CAST(f.waiter AS nvarchar(11)), ` + epochMs("SYSUTCDATETIME()") + `
FROM found AS f
JOIN sys.dm_exec_sessions AS s ON s.session_id = f.session_id
LEFT JOIN sys.dm_exec_connections AS c ON c.session_id = f.session_id AND c.parent_connection_id IS NULL
OUTER APPLY sys.dm_exec_sql_text(c.most_recent_sql_handle) AS txt
WHERE f.session_id <> @@SPID
ORDER BY f.session_id, f.waiter`

// BlockerStatement is the statement of Blockers, for golden tests.
func BlockerStatement() string { return blockersSQL }

// Blockers implements dialects.BlockerFinder with blockersSQL. The
// statement that ends a blocker is KILL session_id. It has not been run
// against a server: its shape is kept by a golden file and its columns by
// a test that reads them.
func (a *LockAdmin) Blockers(ctx context.Context, tables []string) ([]dialects.Blocker, error) {
	if len(tables) == 0 {
		tables = dialects.KnownTableNames(nil)
	}
	rows, err := a.db.QueryContext(ctx, blockersSQL, strings.Join(tables, ","))
	if err != nil {
		return nil, dialects.Wrap(Name, "find blockers", fmt.Errorf("read sys.dm_tran_locks: %w", err))
	}
	out, err := sqlkit.ScanBlockers(rows, func(id string) string { return "KILL " + id })
	return out, dialects.Wrap(Name, "find blockers", err)
}
