// Package cronlock runs the jobs of robfig/cron (v3) on one node of many:
// SkipIfLocked is a cron.JobWrapper, like cron.SkipIfStillRunning, that
// runs a job only while it holds a named lock on any database schedlock
// opens, and skips the run when another node holds it.
//
//	db, err := lock.Open(ctx, "postgres://app@db1/jobs")
//	…
//	c := cron.New()
//	c.AddJob("0 2 * * *", cron.NewChain(
//		cronlock.SkipIfLocked(db, "nightly-report", lock.Options{AtMost: time.Hour, AtLeast: 5 * time.Minute}, logger),
//	).Then(job))
//
// The lease is refreshed every third of AtMost while the job runs (see
// lock.WithLock). AtLeast keeps the lock after a quick run, so that a node
// whose clock is behind, or that fires a moment later, finds it taken and
// skips the same tick: choose it above the nodes' clock skew and start
// spread and below the job's interval (half the interval is a good
// default). It holds on every strategy: on the table strategy in the lease,
// by the database's clock; on the session strategy (Open's default on
// PostgreSQL and MySQL/MariaDB) this process keeps the lock on its
// connection until AtLeast has passed since the acquire and then frees it,
// in the background, the run returning at once. A process that exits or
// closes its lock.DB before then frees a session lock sooner: the server
// ends a session's locks with the session. It uses only the public API of
// package lock.
package cronlock

import (
	"context"
	"errors"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/schedlock/schedlock/lock"
)

// AcquireTimeout bounds connecting and acquiring for one run, on top of
// Options.Wait: a database that does not answer fails the run instead of
// holding up the job's goroutine for ever.
const AcquireTimeout = 30 * time.Second

// ContextJob is a cron.Job that can be run with a context. SkipIfLocked
// calls RunContext instead of Run with the lease's context, which is
// cancelled when the lease is lost (its cause matches lock.ErrLeaseLost),
// and logs the error it returns.
type ContextJob interface {
	cron.Job
	RunContext(ctx context.Context) error
}

// JobFunc is a ContextJob made of a function; Run runs it without a
// deadline and drops its error.
type JobFunc func(ctx context.Context) error

// Run implements cron.Job.
func (f JobFunc) Run() { _ = f(context.Background()) }

// RunContext implements ContextJob.
func (f JobFunc) RunContext(ctx context.Context) error { return f(ctx) }

// SkipIfLocked returns a cron.JobWrapper that runs each run of a job under
// the lock called name on locker, with opts (default: one try, a 30-minute
// lease refreshed while the job runs, no at-least; AtLeast keeps the lock
// after a quick run on every strategy, see the package doc). When another node
// holds the lock the run is skipped and logged at Info ("skip", with the
// lock's name and its holder); any other failure to take the lock, a lost
// lease, a failed release and the error of a ContextJob are logged at
// Error. A nil logger logs to cron.DefaultLogger.
func SkipIfLocked(locker lock.Locker, name string, opts lock.Options, logger cron.Logger) cron.JobWrapper {
	if logger == nil {
		logger = cron.DefaultLogger
	}
	return func(job cron.Job) cron.Job {
		return cron.FuncJob(func() {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			acquiring := time.AfterFunc(AcquireTimeout+max(opts.Wait, 0), cancel)
			defer acquiring.Stop()
			err := lock.WithLock(ctx, locker, name, opts, func(leaseCtx context.Context, _ lock.Lease) error {
				if !acquiring.Stop() {
					return context.Canceled // the acquire took too long: no run
				}
				if cj, ok := job.(ContextJob); ok {
					return cj.RunContext(leaseCtx)
				}
				job.Run()
				return nil
			})
			switch {
			case err == nil:
			case errors.Is(err, lock.ErrHeld):
				logger.Info("skip", "lock", name, "reason", err.Error())
			case errors.Is(err, context.Canceled) && ctx.Err() != nil:
				logger.Error(err, "lock not taken in time", "lock", name, "timeout", AcquireTimeout+max(opts.Wait, 0))
			default:
				logger.Error(err, "run under lock", "lock", name)
			}
		})
	}
}
