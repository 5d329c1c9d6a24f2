package lock_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	_ "github.com/schedlock/schedlock/dialects/sqlite" // the backend of the example's DSN; postgres://… needs dialects/postgres
	"github.com/schedlock/schedlock/lock"
)

// Example runs a job under a lock on a SQLite file (any DSN the schedlock
// command takes works the same, for example postgres://app@db1/jobs).
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "lock-example")
	defer os.RemoveAll(dir)

	db, err := lock.Open(ctx, filepath.Join(dir, "locks.db")+"?x-create-file=true") // a new file
	if err != nil {
		fmt.Println(err)
		return
	}
	defer db.Close()
	if err := db.CreateTable(ctx); err != nil { // SQLite locks through a lease table
		fmt.Println(err)
		return
	}

	err = lock.WithLock(ctx, db, "nightly-report", lock.Options{}, func(ctx context.Context, lease lock.Lease) error {
		// A second acquirer is refused while the job runs.
		_, err := db.Acquire(ctx, "nightly-report", lock.Options{})
		fmt.Println("second acquirer held off:", errors.Is(err, lock.ErrHeld))
		return nil
	})
	fmt.Println("job done:", err == nil, "strategy:", db.Strategy())
	// Output:
	// second acquirer held off: true
	// job done: true strategy: table
}
