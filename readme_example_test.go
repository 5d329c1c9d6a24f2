package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/sqlite"
)

// Example_withLock is the library snippet of README.md, run on a SQLite
// file instead of PostgreSQL so it needs no server.
func Example_withLock() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "schedlock-example")
	defer os.RemoveAll(dir)

	sqlDB, err := sql.Open("sqlite", sqlite.DSN(filepath.Join(dir, "locks.db")))
	if err != nil {
		panic(err)
	}
	defer sqlDB.Close()
	db, err := dialects.Open(ctx, sqlDB, "sqlite")
	if err != nil {
		panic(err)
	}
	locker, err := db.TableLocker(dialects.Table{})
	if err != nil {
		panic(err)
	}
	if err := locker.CreateTable(ctx); err != nil {
		panic(err)
	}

	opts := dialects.Options{AtMost: time.Hour, AtLeast: time.Minute}
	err = dialects.WithLock(ctx, locker, "nightly-report", opts, func(ctx context.Context, lease dialects.Lease) error {
		token, _ := lease.Token()
		fmt.Println("running the report with fencing token", token)

		// Meanwhile another node tries the same job and is turned away.
		_, err := locker.Acquire(ctx, "nightly-report", dialects.Options{})
		fmt.Println("second node held off:", errors.Is(err, dialects.ErrHeld))
		return nil
	})
	fmt.Println("done:", err)

	// AtLeast keeps the lock for a minute after an early finish, so a node
	// whose clock is a little behind does not run the job again.
	_, err = locker.Acquire(ctx, "nightly-report", dialects.Options{})
	fmt.Println("still held after release:", errors.Is(err, dialects.ErrHeld))
	// Output:
	// running the report with fencing token 1
	// second node held off: true
	// done: <nil>
	// still held after release: true
}
