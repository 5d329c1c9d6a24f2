package checks

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/claimtable"
	"github.com/schedlock/schedlock/dialects/sqlkit"
)

// claimChecks prove task-row claims (IDs claim.*) on a SQL backend whose
// dialect has them. A run whose Config names Strategies leaves them out
// (NewRunner): claims are not a lock strategy. Every check makes its own
// task table, named after the run's prefix, and drops it.
func claimChecks(cfg Config) []Check {
	if cfg.Backend != nil && !claimtable.Supported(cfg.Backend) { // no backend: every ID, for completion
		return nil
	}
	c := func(id, title string, run func(ctx context.Context, env *Env) (string, error)) Check {
		return Check{ID: "claim." + id, Title: title, Run: run}
	}
	return []Check{
		c("strategy", "the recommended claim strategy is proved by the probe (SKIP LOCKED stubs are caught)", checkClaimStrategy),
		c("skip", "a row locked by another transaction is skipped without waiting", checkClaimSkip),
		c("isolation", "claims run under the isolation their locks need (MySQL READ COMMITTED, SQL Server READPAST under RCSI)", checkClaimIsolation),
		c("exactly-once", "4 workers claiming 200 rows in batches claim every row exactly once", checkClaimExactlyOnce),
		c("order", "rows are claimed by priority, then due time", checkClaimOrder),
		c("lease", "a crashed worker's rows are reclaimed after the claim lease, not before", checkClaimLease),
		c("owner", "completion by a worker that no longer owns the row is refused and changes nothing", checkClaimOwner),
		c("batch", "a batch larger than SQL Server's 2,100-parameter limit claims every row once", checkClaimBatch),
		c("bad-input", "a batch of 0 or above the limit, missing mapped columns and a short lease are refused or warned", checkClaimBadInput),
	}
}

// isClaimCheck reports a claim.* check.
func isClaimCheck(c Check) bool { return strings.HasPrefix(c.ID, "claim.") }

// claimStrategy is the strategy the run's probe recommends, narrowed to
// the dialect's claims.
func (e *Env) claimStrategy(ctx context.Context) (dialects.ClaimStrategy, claimtable.Builder, dialects.Capabilities, error) {
	db, ok := sqlkit.Of(e.Backend)
	if !ok {
		return "", nil, dialects.Capabilities{}, Skipf("claims need a SQL database")
	}
	b, ok := claimtable.BuilderOf(e.Backend)
	if !ok {
		return "", nil, dialects.Capabilities{}, Skipf("the %s dialect has no claims", db.Info.Dialect)
	}
	caps, err := e.capabilities(ctx)
	if err != nil {
		return "", nil, caps, err
	}
	s := caps.Recommended.ClaimStrategy
	if !slices.Contains(b.Strategies(), s) {
		s = dialects.ClaimOptimistic
	}
	return s, b, caps, nil
}

// claimer makes a fresh task table for the check, dropped when it ends.
func (e *Env) claimer(ctx context.Context, opts claimtable.Options) (*claimtable.Claimer, error) {
	strategy, b, _, err := e.claimStrategy(ctx)
	if err != nil {
		return nil, err
	}
	if opts.Backoff == nil {
		opts.Backoff = func(int) time.Duration { return 0 }
	}
	suffix := e.Prefix
	if len(suffix) > 8 {
		suffix = suffix[len(suffix)-8:]
	}
	name := fmt.Sprintf("sl_claims_%s_%d", suffix, e.run.seq.Add(1))
	cl, err := claimtable.New(sqlkit.MustOf(e.Backend).SQL, b, claimtable.Table{Name: name}, strategy, opts)
	if err != nil {
		return nil, err
	}
	if err := cl.CreateTable(ctx); err != nil {
		return nil, err
	}
	e.Defer(cl.DropTable)
	return cl, nil
}

func newTasks(n int, priority int64) []claimtable.NewTask {
	out := make([]claimtable.NewTask, n)
	for i := range out {
		out[i] = claimtable.NewTask{Type: "selfcheck", Priority: priority}
	}
	return out
}

// checkClaimStrategy proves the recommendation against the probe: a
// skip-locked or readpast recommendation needs a probe that saw a locked
// row skipped; a database whose SKIP LOCKED is no lock (TiDB, CockroachDB)
// or failed the probe must get optimistic claims.
func checkClaimStrategy(ctx context.Context, env *Env) (string, error) {
	strategy, _, caps, err := env.claimStrategy(ctx)
	if err != nil {
		return "", err
	}
	rec, why := caps.Recommended.ClaimStrategy, caps.Recommended.ClaimReason
	product := env.Backend.Detected().Product
	untrusted := product == dialects.ProductCockroachDB || product == dialects.ProductTiDB
	proved := caps.SkipLocked.Status == dialects.StatusYes && strings.HasPrefix(caps.SkipLocked.Detail, "proved")
	switch {
	case rec != dialects.ClaimOptimistic && untrusted:
		return "", remedied(fmt.Errorf("%s is recommended on %s, whose SKIP LOCKED is not a lock (%s)", rec, product, caps.SkipLocked.Detail), "claim with the optimistic strategy")
	case rec != dialects.ClaimOptimistic && !proved:
		return "", remedied(fmt.Errorf("%s is recommended but the probe did not prove it: skip_locked is %s (%s)", rec, caps.SkipLocked.Status, caps.SkipLocked.Detail), "claim with the optimistic strategy, or run selfcheck with a user that may create the probe table")
	case untrusted && caps.SkipLocked.Supported:
		return fmt.Sprintf("caught: the probe saw SKIP LOCKED skip a row on %s, but it is not trusted there; claims are %s (%s)", product, strategy, why), nil
	case rec == dialects.ClaimOptimistic:
		return fmt.Sprintf("claims are optimistic: %s (skip_locked %s: %s)", why, caps.SkipLocked.Status, caps.SkipLocked.Detail), nil
	}
	return fmt.Sprintf("claims are %s: %s (%s)", strategy, why, caps.SkipLocked.Detail), nil
}

// checkClaimSkip holds one row locked in another transaction and claims
// with the run's strategy: the claim must take the other row, not the
// locked one, and not wait for it.
func checkClaimSkip(ctx context.Context, env *Env) (string, error) {
	cl, err := env.claimer(ctx, claimtable.Options{})
	if err != nil {
		return "", err
	}
	if cl.Strategy() == dialects.ClaimOptimistic {
		return "", Skipf("optimistic claims take no row locks: a row being claimed is decided by its version, not skipped")
	}
	if err := cl.Add(ctx, newTasks(2, 0)...); err != nil {
		return "", err
	}
	b := cl.Builder()
	db := sqlkit.MustOf(env.Backend).SQL
	tx, err := db.BeginTx(ctx, b.TxOptions())
	if err != nil {
		return "", err
	}
	defer func() { _ = tx.Rollback() }()
	col := cl.Table().Columns
	var held int64
	first := b.Select(claimtable.Select{Columns: []string{"MIN(" + col.ID + ")"}, Table: cl.Table().Name})
	if err := db.QueryRowContext(ctx, first).Scan(&held); err != nil {
		return "", err
	}
	lockSQL := b.Select(claimtable.Select{Columns: []string{col.ID}, Table: cl.Table().Name, Where: col.ID + " = " + b.Param(1, claimtable.KindInt), Lock: true})
	rows, err := tx.QueryContext(ctx, lockSQL, held)
	if err != nil {
		return "", fmt.Errorf("lock a row in another transaction: %w", err)
	}
	locked := 0
	for rows.Next() {
		locked++
	}
	if err := rows.Close(); err != nil || locked != 1 {
		return "", fmt.Errorf("the holder locked %d rows (%v); want 1", locked, err)
	}
	const wait = 5 * time.Second
	claimCtx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	start := time.Now()
	tasks, err := cl.Claim(claimCtx, claimtable.Request{Owner: env.Owner("B"), Max: 2})
	took := time.Since(start)
	if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
		return "", fmt.Errorf("the claim waited over %s for the locked row instead of skipping it", wait)
	}
	if err != nil {
		return "", err
	}
	for _, t := range tasks {
		if t.ID == held {
			return "", fmt.Errorf("%s claimed row %d, which another transaction holds locked", cl.Strategy(), held)
		}
	}
	if len(tasks) != 1 {
		return "", fmt.Errorf("claimed %d rows; want the 1 row nobody holds", len(tasks))
	}
	return fmt.Sprintf("%s: row %d held by another transaction was skipped; row %d claimed in %s", cl.Strategy(), held, tasks[0].ID, ms(took)), nil
}

// checkClaimIsolation says how this database's isolation pitfall is
// handled, and proves it where it can: MySQL and MariaDB claim under READ
// COMMITTED whatever the session default (REPEATABLE READ gap locks block
// other workers), proved from InnoDB's view of the claim transaction;
// SQL Server adds READCOMMITTEDLOCK under RCSI (proved by claim.skip
// passing there).
func checkClaimIsolation(ctx context.Context, env *Env) (string, error) {
	info := env.Backend.Detected()
	strategy, b, caps, err := env.claimStrategy(ctx)
	if err != nil {
		return "", err
	}
	session := caps.Isolation.Detail
	switch info.Dialect {
	case "mysql":
		opts := b.TxOptions()
		if opts == nil || opts.Isolation != sql.LevelReadCommitted {
			return "", fmt.Errorf("claims on %s do not ask for READ COMMITTED (session default %s)", info.Product, session)
		}
		cl, err := env.claimer(ctx, claimtable.Options{})
		if err != nil {
			return "", err
		}
		if err := cl.Add(ctx, newTasks(1, 0)...); err != nil {
			return "", err
		}
		db := sqlkit.MustOf(env.Backend).SQL
		tx, err := db.BeginTx(ctx, opts)
		if err != nil {
			return "", err
		}
		// Rolled back before the table is dropped, which would wait for it.
		env.Defer(func(context.Context) error { return tx.Rollback() })
		lock := b.Select(claimtable.Select{Columns: []string{cl.Table().Columns.ID}, Table: cl.Table().Name, Lock: true})
		if err := queryRows(ctx, tx, lock); err != nil {
			return "", err
		}
		var level string
		err = tx.QueryRowContext(ctx, "SELECT trx_isolation_level FROM information_schema.innodb_trx WHERE trx_mysql_thread_id = CONNECTION_ID()").Scan(&level)
		if err != nil || level == "" {
			return fmt.Sprintf("session default %s; claim transactions set READ COMMITTED (not observable here: %v)", session, errOrNone(err)), nil
		}
		return fmt.Sprintf("session default %s; the claim transaction runs %s", session, level), nil
	case "sqlserver":
		if info.Mode != "" {
			return fmt.Sprintf("READ_COMMITTED_SNAPSHOT is on (%s): readpast claims add READCOMMITTEDLOCK (strategy %s)", session, strategy), nil
		}
		return fmt.Sprintf("READ_COMMITTED_SNAPSHOT is off; session %s; a session under SNAPSHOT or SERIALIZABLE is refused with a clear error (strategy %s)", session, strategy), nil
	}
	return "", Skipf("no isolation pitfall for claims on %s (session %s)", info.Product, session)
}

func errOrNone(err error) string {
	if err == nil {
		return "the transaction is not listed yet"
	}
	return err.Error()
}

// checkClaimExactlyOnce: N workers × M rows, each row once, none lost.
func checkClaimExactlyOnce(ctx context.Context, env *Env) (string, error) {
	const workers, total, batch = 4, 200, 7
	cl, err := env.claimer(ctx, claimtable.Options{})
	if err != nil {
		return "", err
	}
	if err := cl.Add(ctx, newTasks(total, 0)...); err != nil {
		return "", err
	}
	var mu sync.Mutex
	seen := map[int64]int{}
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			owner := env.Owner(fmt.Sprintf("worker%d", w))
			for empty := 0; empty < 3; {
				tasks, err := cl.Claim(ctx, claimtable.Request{Owner: owner, Max: batch})
				if err != nil {
					errs[w] = err
					return
				}
				if len(tasks) == 0 {
					empty++
					continue
				}
				empty = 0
				mu.Lock()
				for _, t := range tasks {
					seen[t.ID]++
				}
				mu.Unlock()
				for i := range tasks {
					if err := cl.Complete(ctx, &tasks[i]); err != nil {
						errs[w] = err
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return "", err
	}
	var twice []string
	for id, n := range seen {
		if n > 1 {
			twice = append(twice, fmt.Sprintf("%d (%d×)", id, n))
		}
	}
	if len(twice) > 0 {
		return "", fmt.Errorf("rows claimed more than once: %s", strings.Join(twice, ", "))
	}
	l, err := cl.List(ctx, claimtable.ListOptions{All: true, Limit: 10 * total})
	if err != nil {
		return "", err
	}
	done := 0
	for _, r := range l.Rows {
		if r.State == claimtable.StateDone {
			done++
		}
	}
	if done != total || len(seen) != total {
		return "", fmt.Errorf("%d of %d rows done, %d claimed: rows were lost", done, total, len(seen))
	}
	return fmt.Sprintf("%s: %d workers claimed %d rows in batches of %d, each exactly once", cl.Strategy(), workers, total, batch), nil
}

// checkClaimOrder: one worker claiming one row at a time gets them by
// priority, then due time; a row not yet due is left.
func checkClaimOrder(ctx context.Context, env *Env) (string, error) {
	cl, err := env.claimer(ctx, claimtable.Options{})
	if err != nil {
		return "", err
	}
	prios := []int64{1, 5, 0, 5, 3}
	for _, p := range prios {
		if err := cl.Add(ctx, claimtable.NewTask{Type: "selfcheck", Priority: p}); err != nil {
			return "", err
		}
	}
	if err := cl.Add(ctx, claimtable.NewTask{Type: "selfcheck", Priority: 99, Delay: time.Hour}); err != nil {
		return "", err
	}
	var got []claimtable.Task
	owner := env.Owner("A")
	for range prios {
		tasks, err := cl.Claim(ctx, claimtable.Request{Owner: owner, Max: 1})
		if err != nil {
			return "", err
		}
		if len(tasks) != 1 {
			return "", fmt.Errorf("claim %d returned %d rows; want 1", len(got)+1, len(tasks))
		}
		got = append(got, tasks[0])
	}
	var order []string
	for i, t := range got {
		order = append(order, fmt.Sprint(t.Priority))
		if i == 0 {
			continue
		}
		a := got[i-1]
		if a.Priority < t.Priority || (a.Priority == t.Priority && (a.Due.After(t.Due) || (a.Due.Equal(t.Due) && a.ID > t.ID))) {
			return "", fmt.Errorf("out of order: priorities claimed %s", strings.Join(order, ", "))
		}
	}
	if tasks, err := cl.Claim(ctx, claimtable.Request{Owner: owner, Max: 1}); err != nil || len(tasks) != 0 {
		return "", fmt.Errorf("a row due in an hour was claimed (%d rows, %v)", len(tasks), err)
	}
	return "priorities claimed " + strings.Join(order, ", ") + "; a row due in an hour was left", nil
}

// checkClaimLease: a worker claims rows and dies; another worker gets
// none of them while the lease runs and all of them after, judged by the
// database clock (the reclaim's now is not before the lease end).
func checkClaimLease(ctx context.Context, env *Env) (string, error) {
	const lease = 1500 * time.Millisecond
	cl, err := env.claimer(ctx, claimtable.Options{Lease: lease})
	if err != nil {
		return "", err
	}
	if err := cl.Add(ctx, newTasks(3, 0)...); err != nil {
		return "", err
	}
	dead, err := cl.Claim(ctx, claimtable.Request{Owner: env.Owner("dead"), Max: 3, Lease: time.Hour})
	if err != nil || len(dead) != 3 {
		return "", fmt.Errorf("claim: %d rows, %v", len(dead), err)
	}
	rescuer := env.Owner("rescuer")
	if early, err := cl.Claim(ctx, claimtable.Request{Owner: rescuer, Max: 3}); err != nil || len(early) != 0 {
		return "", fmt.Errorf("rows within their hour-long lease were claimed again (%d rows, %v)", len(early), err)
	}
	// The same with a short lease, run out while nobody touches the rows.
	if n, err := cl.ReleaseOwner(ctx, dead[0].Owner, claimtable.ReleaseOptions{Force: true}); err != nil || n != 3 {
		return "", fmt.Errorf("release: %d, %v", n, err)
	}
	dead, err = cl.Claim(ctx, claimtable.Request{Owner: env.Owner("dead"), Max: 3})
	if err != nil || len(dead) != 3 {
		return "", fmt.Errorf("claim: %d rows, %v", len(dead), err)
	}
	deadline := time.Now().Add(time.Minute)
	var got []claimtable.Task
	polls := 0
	for len(got) < 3 {
		if time.Now().After(deadline) {
			return "", fmt.Errorf("the dead worker's rows were not reclaimed within a minute of a %s lease (%d of 3)", lease, len(got))
		}
		tasks, err := cl.Claim(ctx, claimtable.Request{Owner: rescuer, Max: 3, Lease: time.Hour})
		if err != nil {
			return "", err
		}
		got = append(got, tasks...)
		polls++
		if len(got) < 3 {
			if err := sleep(ctx, 100*time.Millisecond); err != nil {
				return "", err
			}
		}
	}
	ends := map[int64]time.Time{}
	for _, d := range dead {
		ends[d.ID] = d.ClaimedUntil
	}
	for _, g := range got {
		end, ok := ends[g.ID]
		if !ok {
			return "", fmt.Errorf("reclaimed row %d, which the dead worker never held", g.ID)
		}
		if at := g.ClaimedUntil.Add(-time.Hour); at.Before(end) {
			return "", fmt.Errorf("row %d reclaimed at %s, before the lease ended at %s", g.ID, stamp(at), stamp(end))
		}
	}
	return fmt.Sprintf("%s: none reclaimed within the lease; all 3 reclaimed after the %s lease ended (database clock), %d polls", cl.Strategy(), lease, polls), nil
}

// checkClaimOwner: a completion by a worker that lost the row is refused
// and leaves the row as it was.
func checkClaimOwner(ctx context.Context, env *Env) (string, error) {
	cl, err := env.claimer(ctx, claimtable.Options{Lease: time.Hour})
	if err != nil {
		return "", err
	}
	if err := cl.Add(ctx, newTasks(1, 0)...); err != nil {
		return "", err
	}
	a, err := cl.Claim(ctx, claimtable.Request{Owner: env.Owner("A"), Max: 1})
	if err != nil || len(a) != 1 {
		return "", fmt.Errorf("claim: %d rows, %v", len(a), err)
	}
	if _, err := cl.ReleaseOwner(ctx, a[0].Owner, claimtable.ReleaseOptions{Force: true}); err != nil {
		return "", err
	}
	b, err := cl.Claim(ctx, claimtable.Request{Owner: env.Owner("B"), Max: 1})
	if err != nil || len(b) != 1 {
		return "", fmt.Errorf("second claim: %d rows, %v", len(b), err)
	}
	before, err := cl.List(ctx, claimtable.ListOptions{All: true})
	if err != nil {
		return "", err
	}
	stale := a[0]
	if err := cl.Complete(ctx, &stale); !errors.Is(err, claimtable.ErrNotClaimed) {
		return "", fmt.Errorf("completion by the worker that lost the row: %v; want it refused", err)
	}
	intruder := b[0]
	intruder.Owner = env.Owner("intruder")
	if err := cl.Fail(ctx, &intruder); !errors.Is(err, claimtable.ErrNotClaimed) {
		return "", fmt.Errorf("failure reported by a non-owner: %v; want it refused", err)
	}
	after, err := cl.List(ctx, claimtable.ListOptions{All: true})
	if err != nil {
		return "", err
	}
	if !slices.Equal(before.Rows, after.Rows) {
		return "", fmt.Errorf("refused operations changed the row: %+v → %+v", before.Rows, after.Rows)
	}
	if err := cl.Complete(ctx, &b[0]); err != nil {
		return "", fmt.Errorf("completion by the owner: %w", err)
	}
	return "completion by the previous owner and failure by an intruder refused, row unchanged; the owner completed it", nil
}

// checkClaimBatch claims 2,300 rows in one call: the id lists are cut
// below 2,100 parameters per statement.
func checkClaimBatch(ctx context.Context, env *Env) (string, error) {
	const n = 2300
	cl, err := env.claimer(ctx, claimtable.Options{})
	if err != nil {
		return "", err
	}
	if err := cl.Add(ctx, newTasks(n, 0)...); err != nil {
		return "", err
	}
	tasks, err := cl.Claim(ctx, claimtable.Request{Owner: env.Owner("bulk"), Max: n})
	if err != nil {
		return "", err
	}
	ids := map[int64]bool{}
	for _, t := range tasks {
		ids[t.ID] = true
	}
	if len(tasks) != n || len(ids) != n {
		return "", fmt.Errorf("claimed %d rows (%d distinct); want %d", len(tasks), len(ids), n)
	}
	return fmt.Sprintf("%s: %d rows claimed in one call, each once", cl.Strategy(), n), nil
}

// checkClaimBadInput: batch sizes out of range are refused, a table
// without the mapped columns is refused naming them, a lease shorter than
// the expected run is warned.
func checkClaimBadInput(ctx context.Context, env *Env) (string, error) {
	cl, err := env.claimer(ctx, claimtable.Options{})
	if err != nil {
		return "", err
	}
	for _, max := range []int{0, claimtable.MaxBatch + 1} {
		if _, err := cl.Claim(ctx, claimtable.Request{Owner: env.Owner("A"), Max: max}); !errors.Is(err, dialects.ErrInvalid) {
			return "", fmt.Errorf("a batch of %d: %v; want it refused", max, err)
		}
	}
	cols := claimtable.DefaultColumns()
	cols.ClaimedUntil, cols.Version = "lease_end", "row_version"
	mapped, err := claimtable.New(sqlkit.MustOf(env.Backend).SQL, cl.Builder(), claimtable.Table{Name: cl.Table().Name, Columns: cols}, cl.Strategy(), claimtable.Options{})
	if err != nil {
		return "", err
	}
	colErr := mapped.CheckColumns(ctx, claimtable.ReadColumns(env.Backend))
	if !errors.Is(colErr, dialects.ErrInvalid) || !strings.Contains(colErr.Error(), "lease_end") || !strings.Contains(colErr.Error(), "row_version") {
		return "", fmt.Errorf("a table without the mapped columns lease_end and row_version: %v; want an error naming them", colErr)
	}
	short, err := claimtable.New(sqlkit.MustOf(env.Backend).SQL, cl.Builder(), claimtable.Table{}, cl.Strategy(), claimtable.Options{Lease: time.Minute, ExpectedRun: time.Hour})
	if err != nil {
		return "", err
	}
	if len(short.Warnings()) != 1 {
		return "", fmt.Errorf("a 1m lease for a 1h run gave no warning")
	}
	return "batches of 0 and " + fmt.Sprint(claimtable.MaxBatch+1) + " refused; missing columns named (" + colErr.Error()[strings.Index(colErr.Error(), "lacks"):] + "); short lease warned", nil
}

// queryRows runs query in tx and reads its rows.
func queryRows(ctx context.Context, tx *sql.Tx, query string) error {
	rows, err := tx.QueryContext(ctx, query)
	if err != nil {
		return err
	}
	for rows.Next() {
	}
	if err := rows.Err(); err != nil {
		_ = rows.Close()
		return err
	}
	return rows.Close()
}
