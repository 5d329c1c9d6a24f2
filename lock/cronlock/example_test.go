package cronlock_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/robfig/cron/v3"

	_ "github.com/schedlock/schedlock/dialects/sqlite" // the backend of the example's DSN; postgres://… needs dialects/postgres
	"github.com/schedlock/schedlock/lock"
	"github.com/schedlock/schedlock/lock/cronlock"
)

// printLogger prints what the wrapper logs, without the holder (which
// names a host and a time).
type printLogger struct{}

func (printLogger) Info(msg string, kv ...any) { fmt.Println(msg, kv[0], kv[1]) }
func (printLogger) Error(err error, msg string, _ ...any) {
	fmt.Println(msg, err)
}

// ExampleSkipIfLocked wraps a cron job so that, of the nodes sharing a
// database (a SQLite file here), one runs each tick and the others skip.
func ExampleSkipIfLocked() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "cronlock-example")
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

	underLock := cronlock.SkipIfLocked(db, "nightly-report", lock.Options{AtMost: time.Hour, AtLeast: time.Minute}, printLogger{})
	var otherNode cron.Job
	report := cron.NewChain(underLock).Then(cron.FuncJob(func() {
		fmt.Println("report runs")
		otherNode.Run() // the same tick fires on another node meanwhile
	}))
	otherNode = cron.NewChain(underLock).Then(cron.FuncJob(func() { fmt.Println("runs twice!") }))

	c := cron.New()
	if _, err := c.AddJob("0 2 * * *", report); err != nil {
		fmt.Println(err)
		return
	}
	report.Run() // what c runs at 02:00
	// Output:
	// report runs
	// skip lock nightly-report
}
