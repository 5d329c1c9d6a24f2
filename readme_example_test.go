package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	_ "github.com/schedlock/schedlock/dialects/sqlite" // the backend of the example's DSN; postgres://… needs dialects/postgres
	"github.com/schedlock/schedlock/lock"
)

// Example_withLock is the library snippet of README.md, run on a SQLite
// file instead of PostgreSQL so it needs no server.
func Example_withLock() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "schedlock-example")
	defer os.RemoveAll(dir)

	db, err := lock.Open(ctx, filepath.Join(dir, "locks.db")+"?x-strategy=table&x-create-file=true")
	if err != nil {
		panic(err)
	}
	defer db.Close()
	if err := db.CreateTable(ctx); err != nil { // lockers never create tables on their own
		panic(err)
	}

	opts := lock.Options{AtMost: time.Hour, AtLeast: time.Minute}
	err = lock.WithLock(ctx, db, "nightly-report", opts, func(ctx context.Context, lease lock.Lease) error {
		token, _ := lease.Token()
		fmt.Println("running the report with fencing token", token)

		// Meanwhile another node tries the same job and is turned away.
		_, err := db.Acquire(ctx, "nightly-report", lock.Options{})
		fmt.Println("second node held off:", errors.Is(err, lock.ErrHeld))
		return nil
	})
	fmt.Println("done:", err)

	// AtLeast keeps the lock for a minute after an early finish, so a node
	// whose clock is a little behind does not run the job again.
	_, err = db.Acquire(ctx, "nightly-report", lock.Options{})
	fmt.Println("still held after release:", errors.Is(err, lock.ErrHeld))
	// Output:
	// running the report with fencing token 1
	// second node held off: true
	// done: <nil>
	// still held after release: true
}

// TestReadmeNamesItsExamples: every "`ExampleX` in [file](file)" of the
// README names a function that file defines.
func TestReadmeNamesItsExamples(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	refs := regexp.MustCompile("`(Example\\w*)`\\s+in\\s+\\[[^\\]]*\\]\\(([^)]+)\\)").FindAllStringSubmatch(string(readme), -1)
	if len(refs) == 0 {
		t.Fatal("README names no runnable example")
	}
	for _, ref := range refs {
		src, err := os.ReadFile(ref[2])
		if err != nil {
			t.Errorf("README names %s in %s: %v", ref[1], ref[2], err)
			continue
		}
		if !strings.Contains(string(src), "\nfunc "+ref[1]+"() {") {
			t.Errorf("README names %s, which %s does not define", ref[1], ref[2])
		}
	}
}
