package locktable

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/internal/batch"
)

// RefreshWindow is the least time between two batch refresh statements of
// one Locker: refreshes that arrive while one is in flight, or within the
// window after it was sent, go together in the next. A refresh that finds
// the Locker idle is sent at once, so a lone lease never waits; 10,000
// leases of 30 s (1,000 refreshes a second) take about 20 statements a
// second.
const RefreshWindow = 50 * time.Millisecond

// batchTimeout bounds a batch statement whose leases' refreshes have no
// deadline of their own.
const batchTimeout = 30 * time.Second

// renewal is what a refresh statement said about one lease.
type renewal struct {
	start   time.Time // host time before the statement was sent
	renewed bool
	// exact is false when the statement reported only a row count that
	// fell short: renewed is then unknown, and the row tells.
	exact bool
	err   error
}

// refreshReq is one lease's Refresh waiting in the Locker's queue.
type refreshReq struct {
	lease    *lease
	deadline time.Time // zero: none
}

type refreshItem = batch.Item[refreshReq, renewal]

// batchRefresher returns the builder's BatchRefresher and its batch size,
// or nil when it renews one lease per statement.
func (l *Locker) batchRefresher() (BatchRefresher, int) {
	br, ok := l.b.(BatchRefresher)
	if !ok || br.MaxBatch() < 2 {
		return nil, 0
	}
	return br, br.MaxBatch()
}

// batchable reports whether s's refresh may join a batch: the builder
// has one, and s's token is known (a Handle given token 0 skips the
// token comparison, which only its own statement does).
func (l *Locker) batchable(s *lease) bool {
	br, _ := l.batchRefresher()
	return br != nil && (!s.hasToken || s.token != 0)
}

// sendRefreshes is the refresh queue's send: one statement per owner and
// AtMost and per MaxBatch leases, one after the other.
func (l *Locker) sendRefreshes(items []*refreshItem) {
	type key struct {
		owner  string
		atMost time.Duration
	}
	groups := map[key][]*refreshItem{}
	var order []key
	for _, it := range items {
		k := key{it.Val.lease.owner, it.Val.lease.atMost}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], it)
	}
	_, size := l.batchRefresher()
	for _, k := range order {
		for _, chunk := range distinctChunks(groups[k], size, func(it *refreshItem) string { return it.Val.lease.stored }) {
			ctx, cancel := batchContext(chunk)
			leases := make([]*lease, len(chunk))
			for i, it := range chunk {
				leases[i] = it.Val.lease
			}
			rs := l.renew(ctx, leases)
			cancel()
			for i, it := range chunk {
				it.Deliver(rs[i])
			}
		}
	}
}

// distinctChunks splits items, in order, into chunks of at most size
// whose stored names differ: a statement's answer names the rows it
// renewed, which tells two leases of one name (an old one and the one
// that took the name again) apart only in different statements.
func distinctChunks[T any](items []T, size int, stored func(T) string) [][]T {
	var chunks [][]T
	var seen []map[string]bool
	for _, it := range items {
		n := stored(it)
		i := 0
		for i < len(chunks) && (len(chunks[i]) >= size || seen[i][n]) {
			i++
		}
		if i == len(chunks) {
			chunks = append(chunks, nil)
			seen = append(seen, map[string]bool{})
		}
		chunks[i] = append(chunks[i], it)
		seen[i][n] = true
	}
	return chunks
}

// batchContext bounds a statement by the latest deadline of its leases'
// refreshes, or by batchTimeout when one has none.
func batchContext(items []*refreshItem) (context.Context, context.CancelFunc) {
	var latest time.Time
	for _, it := range items {
		d := it.Val.deadline
		if d.IsZero() {
			latest = time.Now().Add(batchTimeout)
			break
		}
		if d.After(latest) {
			latest = d
		}
	}
	return context.WithDeadline(context.Background(), latest)
}

// renew sends the refresh of leases, all of one owner and AtMost: the
// builder's Refresh for one, RefreshBatch for more. It returns what the
// statement said of each lease, in order.
func (l *Locker) renew(ctx context.Context, leases []*lease) []renewal {
	out := make([]renewal, len(leases))
	br, _ := l.batchRefresher()
	if len(leases) == 1 || br == nil {
		for i, s := range leases {
			start := time.Now()
			_, done, err := l.exec(ctx, opRefresh, s.binding())
			out[i] = renewal{start: start, renewed: done, exact: true, err: err}
		}
		return out
	}
	start := time.Now()
	renewed, exact, err := l.execBatch(ctx, br, leases)
	for i := range out {
		out[i] = renewal{start: start, exact: exact, err: err}
		if err == nil && exact {
			out[i].renewed = renewed[leases[i].stored]
		}
	}
	return out
}

// execBatch sends one RefreshBatch statement for leases. With a ResultRow
// statement it returns the stored names it renewed (exact); with a
// ResultRowsAffected one, every name when the count is the batch's size
// (exact), else nothing known.
func (l *Locker) execBatch(ctx context.Context, br BatchRefresher, leases []*lease) (map[string]bool, bool, error) {
	s := l.schema
	s.Zone, s.UntilWholeSeconds = l.frameNow(), l.wholeSeconds.Load()
	stmt := br.RefreshBatch(s, len(leases))
	vals, err := batchValues(stmt.Args, leases)
	if err != nil {
		return nil, false, err
	}
	renewed := make(map[string]bool, len(leases))
	exact := stmt.Result == ResultRow
	err = l.retrying(ctx, func() error {
		clear(renewed)
		l.sent[opRefreshBatch].Add(1)
		switch stmt.Result {
		case ResultRow:
			rows, err := l.db.QueryContext(ctx, stmt.SQL, vals...)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var name sql.NullString
				if err := rows.Scan(&name); err != nil {
					return err
				}
				renewed[name.String] = true
			}
			return rows.Err()
		case ResultRowsAffected:
			res, err := l.db.ExecContext(ctx, stmt.SQL, vals...)
			if err != nil {
				return err
			}
			n, err := res.RowsAffected()
			if err != nil {
				return fmt.Errorf("read the affected row count: %w", err)
			}
			if exact = n == int64(len(leases)); exact {
				for _, s := range leases {
					renewed[s.stored] = true
				}
			}
			return nil
		default:
			return fmt.Errorf("refresh-batch statement has result kind %d, want a row per lease or a row count", stmt.Result)
		}
	})
	if err != nil {
		return nil, false, l.classify(err)
	}
	return renewed, exact, nil
}

// batchValues binds a RefreshBatch statement's arguments for leases.
func batchValues(args []Arg, leases []*lease) ([]any, error) {
	first := leases[0]
	var out []any
	for i, a := range args {
		switch a {
		case ArgOwner:
			out = append(out, first.owner)
		case ArgAtMostMs:
			out = append(out, first.atMost.Milliseconds())
		case ArgNameArray:
			names := make([]string, len(leases))
			for j, s := range leases {
				names[j] = s.stored
			}
			out = append(out, names)
		case ArgTokenArray:
			tokens := make([]int64, len(leases))
			for j, s := range leases {
				tokens[j] = s.token
			}
			out = append(out, tokens)
		case ArgNameList:
			for _, s := range leases {
				out = append(out, s.stored)
			}
		case ArgNameTokenList:
			for _, s := range leases {
				out = append(out, s.stored, s.token)
			}
		case ArgNameTokenJSON:
			pairs := make([][2]any, len(leases))
			for j, s := range leases {
				pairs[j] = [2]any{s.stored, s.token}
			}
			text, err := json.Marshal(pairs)
			if err != nil {
				return nil, err
			}
			out = append(out, string(text))
		default:
			return nil, fmt.Errorf("refresh-batch parameter %d has argument kind %d, which a batch cannot bind", i+1, a)
		}
	}
	return out, nil
}

// RefreshAll refreshes leases, each taken from l, as Refresh refreshes one,
// with one statement per owner and AtMost (and per MaxBatch leases) where
// the builder is a BatchRefresher. It returns each lease's error, in
// order: nil when it was refreshed; a lease l did not take is an error
// matching dialects.ErrInvalid.
func (l *Locker) RefreshAll(ctx context.Context, leases []dialects.Lease) []error {
	errs := make([]error, len(leases))
	own := make([]*lease, 0, len(leases))
	index := map[*lease]int{}
	for i, x := range leases {
		s, ok := unwrapLease(x)
		if !ok || s.locker != l {
			errs[i] = dialects.Invalidf("RefreshAll: lease %d was not taken from this locker", i)
			continue
		}
		if _, dup := index[s]; dup {
			errs[i] = dialects.Invalidf("RefreshAll: lease %q is given twice", s.name)
			continue
		}
		index[s] = i
		own = append(own, s)
	}
	// Lock in one order, so that two RefreshAll calls cannot deadlock.
	slices.SortFunc(own, func(a, b *lease) int { return int(a.seq - b.seq) })
	for _, s := range own {
		s.opMu.Lock()
	}
	defer func() {
		for _, s := range own {
			s.opMu.Unlock()
		}
	}()
	type key struct {
		owner  string
		atMost time.Duration
	}
	groups := map[key][]*lease{}
	var order []key
	for _, s := range own {
		if err := s.endedErr("refresh"); err != nil {
			errs[index[s]] = err
			continue
		}
		if !l.batchable(s) {
			errs[index[s]] = s.renewed(ctx, l.renew(ctx, []*lease{s})[0])
			continue
		}
		k := key{s.owner, s.atMost}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], s)
	}
	_, size := l.batchRefresher()
	for _, k := range order {
		for _, chunk := range distinctChunks(groups[k], size, func(s *lease) string { return s.stored }) {
			rs := l.renew(ctx, chunk)
			for i, s := range chunk {
				errs[index[s]] = s.renewed(ctx, rs[i])
			}
		}
	}
	return errs
}

// unwrapLease finds the engine's lease under x (a lock.DB, a pause check
// or a namespace wraps it, each with Unwrap).
func unwrapLease(x dialects.Lease) (*lease, bool) {
	for x != nil {
		if s, ok := x.(*lease); ok {
			return s, true
		}
		u, ok := x.(interface{ Unwrap() dialects.Lease })
		if !ok {
			return nil, false
		}
		x = u.Unwrap()
	}
	return nil, false
}

// BatchSize is the most leases one refresh statement renews: the
// builder's MaxBatch, or 1 when it renews one lease per statement.
func (l *Locker) BatchSize() int {
	if _, n := l.batchRefresher(); n > 1 {
		return n
	}
	return 1
}
