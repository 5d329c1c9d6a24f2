package gocronlock_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/go-co-op/gocron/v2"
	"github.com/google/uuid"

	_ "github.com/schedlock/schedlock/dialects/sqlite" // the backend of the example's DSN; postgres://… needs dialects/postgres
	"github.com/schedlock/schedlock/lock"
	"github.com/schedlock/schedlock/lock/gocronlock"
)

// ExampleNewLocker runs one job on two schedulers sharing a database (a
// SQLite file here; on PostgreSQL or MariaDB the DSN is all that changes):
// one runs it, the other finds the lock held and skips. AtLeast keeps the
// lock after the quick run, so a node whose clock is behind skips the same
// tick too.
func ExampleNewLocker() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "gocronlock-example")
	defer os.RemoveAll(dir)
	dsn := filepath.Join(dir, "locks.db") + "?x-create-file=true" // a new file

	ran := make(chan string, 2)
	skipped := make(chan error, 2)
	for _, node := range []string{"node-a", "node-b"} {
		db, err := lock.Open(ctx, dsn)
		if err != nil {
			fmt.Println(err)
			return
		}
		defer db.Close()
		if err := db.CreateTable(ctx); err != nil {
			fmt.Println(err)
			return
		}
		s, err := gocron.NewScheduler(gocron.WithDistributedLocker(
			gocronlock.NewLocker(db, gocronlock.Options{AtMost: 10 * time.Minute, AtLeast: 30 * time.Second})))
		if err != nil {
			fmt.Println(err)
			return
		}
		defer func() { _ = s.Shutdown() }()
		_, err = s.NewJob(gocron.OneTimeJob(gocron.OneTimeJobStartImmediately()),
			gocron.NewTask(func() { ran <- node }),
			gocron.WithName("nightly-report"),
			gocron.WithEventListeners(gocron.AfterLockError(func(_ uuid.UUID, _ string, err error) { skipped <- err })))
		if err != nil {
			fmt.Println(err)
			return
		}
		s.Start()
	}
	<-ran
	fmt.Println("ran once; the other node skipped, lock held:", errors.Is(<-skipped, lock.ErrHeld))
	// Output:
	// ran once; the other node skipped, lock held: true
}

// ExampleNewElector makes this node the leader of its schedulers: only the
// leader runs jobs, the others wait to take over.
func ExampleNewElector() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "gocronlock-example")
	defer os.RemoveAll(dir)

	db, err := lock.Open(ctx, filepath.Join(dir, "locks.db")+"?x-create-file=true")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer db.Close()
	if err := db.CreateTable(ctx); err != nil {
		fmt.Println(err)
		return
	}
	elector, err := gocronlock.NewElector(ctx, db, "report-scheduler", gocronlock.ElectorOptions{Lease: 30 * time.Second})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer elector.Close() // resign, after the scheduler's Shutdown
	s, err := gocron.NewScheduler(gocron.WithDistributedElector(elector))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() { _ = s.Shutdown() }()

	fmt.Println("leader:", elector.IsLeader(ctx) == nil)
	other, _ := gocronlock.NewElector(ctx, db, "report-scheduler", gocronlock.ElectorOptions{})
	defer other.Close()
	fmt.Println("second node leader:", other.IsLeader(ctx) == nil)
	// Output:
	// leader: true
	// second node leader: false
}
