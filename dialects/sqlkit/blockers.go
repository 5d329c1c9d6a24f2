package sqlkit

import (
	"database/sql"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/schedlock/schedlock/dialects"
)

// ScanBlockers reads the rows of a dialect's blocker statement into
// dialects.Blockers, one per session in the order of first appearance
// (sorted by numeric id where ids are numbers). Each row is one thing a
// session holds or one session it blocks, with these columns: session id,
// user, application, client, session start and transaction start (epoch
// milliseconds, NULL when unknown), state, statement, what it holds (""
// for a row that only names a waiter), the lock table ("" when unknown),
// the waiting session's id (NULL for a holder nobody waits for), the
// database's now (epoch milliseconds). terminate gives the statement that
// ends a session.
func ScanBlockers(rows *sql.Rows, terminate func(id string) string) ([]dialects.Blocker, error) {
	defer rows.Close()
	byID := map[string]*dialects.Blocker{}
	var order []string
	for rows.Next() {
		var (
			id, user, app, client, state, query, holds, table sql.NullString
			waiter                                            sql.NullString
			since, txStart, dbNow                             sql.NullInt64
		)
		if err := rows.Scan(&id, &user, &app, &client, &since, &txStart, &state, &query, &holds, &table, &waiter, &dbNow); err != nil {
			return nil, err
		}
		b := byID[id.String]
		if b == nil {
			b = &dialects.Blocker{
				Holder:  dialects.Holder{SessionID: id.String, User: user.String, Client: client.String, Application: app.String, Since: NullMillis(since)},
				TxStart: NullMillis(txStart), State: strings.TrimSpace(state.String), Query: query.String,
				Terminate: terminate(id.String), DBNow: NullMillis(dbNow),
			}
			byID[id.String] = b
			order = append(order, id.String)
		}
		if h := strings.TrimSpace(holds.String); h != "" && !strings.Contains(b.Holds, h) {
			b.Holds = strings.TrimPrefix(b.Holds+", "+h, ", ")
		}
		if b.Table == "" {
			b.Table = table.String
		}
		if w := strings.TrimSpace(waiter.String); waiter.Valid && w != "" && !slices.Contains(b.Waiters, w) {
			b.Waiters = append(b.Waiters, w)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := make([]dialects.Blocker, 0, len(order))
	for _, id := range order {
		sort.Strings(byID[id].Waiters)
		out = append(out, *byID[id])
	}
	sort.SliceStable(out, func(i, j int) bool {
		x, errX := strconv.ParseInt(out[i].SessionID, 10, 64)
		y, errY := strconv.ParseInt(out[j].SessionID, 10, 64)
		return errX == nil && errY == nil && x < y
	})
	return out, nil
}
