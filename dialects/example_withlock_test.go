package dialects_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/sqlite"
)

// A scheduled job that must run on one node of many: WithLock takes the
// lock, keeps its lease alive while the job runs, cancels the job's context
// if the lease is lost, and releases the lock when the job returns.
func ExampleWithLock() {
	dir, err := os.MkdirTemp("", "schedlock-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	sqlDB, err := sql.Open(sqlite.DriverName, sqlite.DSN(filepath.Join(dir, "locks.db")))
	if err != nil {
		log.Fatal(err)
	}
	defer sqlDB.Close()

	ctx := context.Background()
	db, err := sqlite.New(ctx, sqlDB, nil)
	if err != nil {
		log.Fatal(err)
	}
	locker, err := db.TableLocker(dialects.Table{}) // the native "schedlock" table
	if err != nil {
		log.Fatal(err)
	}
	if err := locker.CreateTable(ctx); err != nil {
		log.Fatal(err)
	}

	opts := dialects.Options{AtMost: 10 * time.Minute, Owner: "node-a"}
	err = dialects.WithLock(ctx, locker, "nightly-report", opts, func(ctx context.Context, lease dialects.Lease) error {
		token, _ := lease.Token()
		fmt.Println("node-a runs the report, fencing token", token)

		// Another node trying meanwhile is told who holds the lock.
		_, err := locker.Acquire(ctx, "nightly-report", dialects.Options{Owner: "node-b"})
		var held *dialects.HeldError
		if errors.As(err, &held) {
			fmt.Println("node-b skips: held by", held.Holder)
		}

		// Long work watches ctx: it is cancelled when the lease is lost,
		// and context.Cause(ctx) then matches dialects.ErrLeaseLost.
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-time.After(10 * time.Millisecond):
			return nil
		}
	})
	fmt.Println("report done:", err)

	// Released: the next run takes the lock, with a larger token.
	err = dialects.WithLock(ctx, locker, "nightly-report", dialects.Options{Owner: "node-b"}, func(ctx context.Context, lease dialects.Lease) error {
		token, _ := lease.Token()
		fmt.Println("node-b runs the next report, fencing token", token)
		return nil
	})
	fmt.Println("next report done:", err)
	// Output:
	// node-a runs the report, fencing token 1
	// node-b skips: held by node-a
	// report done: <nil>
	// node-b runs the next report, fencing token 2
	// next report done: <nil>
}
