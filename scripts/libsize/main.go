//go:build ignore

// Command libsize is the smallest program a library user writes: a job
// under a lock on PostgreSQL. scripts/size.sh --library builds it to
// measure what the lock package and one backend link.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	_ "github.com/schedlock/schedlock/dialects/postgres" // the one backend this program uses
	"github.com/schedlock/schedlock/lock"
)

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	db, err := lock.Open(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer db.Close()
	err = lock.WithLock(ctx, db, "nightly-report", lock.Options{AtMost: time.Hour},
		func(ctx context.Context, lease lock.Lease) error {
			fmt.Println("running the report as", lease.Owner())
			return nil
		})
	switch {
	case errors.Is(err, lock.ErrHeld):
		fmt.Println("another node runs it")
	case err != nil:
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
