// Package gocronlock runs the jobs of go-co-op/gocron (v2) on one node of
// many, on any database schedlock opens: a Locker for
// gocron.WithDistributedLocker / WithDistributedJobLocker, and an Elector
// for gocron.WithDistributedElector.
//
//	db, err := lock.Open(ctx, "postgres://app@db1/jobs?x-strategy=table")
//	…
//	s, err := gocron.NewScheduler(gocron.WithDistributedLocker(
//		gocronlock.NewLocker(db, gocronlock.Options{AtLeast: 30 * time.Second})))
//
// # Locker: one lock per run
//
// gocron asks the Locker for a lock named after the job before each run
// and releases it after the run. The lease (Options.AtMost, default 30
// minutes) is refreshed every third of its length while the job runs, so a
// job may run longer than AtMost as long as the database answers; a node
// that dies keeps the lock for at most AtMost.
//
// A lock held only while the job runs does not stop a second run of the
// same tick: the nodes' clocks differ by some milliseconds, a fast job is
// over before the node whose clock is behind fires, and that node finds the
// lock free (gocron issue #841). Options.AtLeast closes that gap the way
// ShedLock's lockAtLeastFor does: on release the lock is kept until it has
// been held AtLeast, judged by the database's clock, so the late nodes find
// it taken and skip. Choose AtLeast larger than the spread of the nodes'
// start times plus their clock skew, and smaller than the job's interval
// minus that spread (half the interval is a good default). On the table
// strategy it is written into the lease. On the session strategy, which has
// no lease, this process keeps the lock on its connection until then (lock's
// Release: Unlock returns at once and the lock is freed in the background);
// a process that exits, or a lock.DB that is closed, frees it sooner, as the
// server frees a session's locks with the session.
//
// # Elector: one leader for every job
//
// NewElector keeps a lease on one lock name for as long as it is leader,
// refreshing it every third of ElectorOptions.Lease; the other nodes retry
// every ElectorOptions.RetryEvery and take over when the leader resigns
// (Close) or its lease runs out. IsLeader answers from memory, without a
// round trip, and stops answering yes a safety margin before a lease that
// could not be refreshed ends. Clock skew does not matter for an elector,
// but leadership moving while a tick fires can skip or repeat that one
// tick; use the Locker with AtLeast when every tick counts.
//
// The package uses only the public API of package lock: any lock.Locker
// works, a *lock.DB, or one wrapped by lock.WithNamespace.
package gocronlock
