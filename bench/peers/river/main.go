// Command schedlock-peer-river runs River (riverqueue/river with its pgx
// v5 driver) on a PostgreSQL database for `schedlock bench --claims
// --peers`: the same no-op work as the bench's — claim a job and complete
// it — so that River's own rate on the same database and machine stands
// beside schedlock's figures. It lives in a module of its own, so River is
// never linked into schedlock.
//
// It reads the connection string from $SCHEDLOCK_PEER_DSN (never from its
// arguments), makes a schema of its own (dropped at the end), runs River's
// migrations there, inserts the jobs, works them with --workers × --batch
// job goroutines for --duration (or until --jobs are done), and prints one
// JSON object: {"jobs": N, "seconds": S, "river": "v0.51.2"}.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
)

// riverVersion is the River release this module requires (go.mod).
const riverVersion = "v0.51.2"

type noopArgs struct{}

func (noopArgs) Kind() string { return "schedlock_bench_noop" }

type noopWorker struct {
	river.WorkerDefaults[noopArgs]
	done *atomic.Int64
}

func (w *noopWorker) Work(context.Context, *river.Job[noopArgs]) error {
	w.done.Add(1)
	return nil
}

func main() {
	workers := flag.Int("workers", 4, "workers, as the bench's")
	batch := flag.Int("batch", 10, "rows per claim, as the bench's: River runs workers × batch job goroutines")
	duration := flag.Duration("duration", 0, "how long to work the jobs")
	jobs := flag.Int64("jobs", 0, "work this many jobs instead of --duration")
	flag.Parse()
	if err := run(*workers, *batch, *duration, *jobs); err != nil {
		fmt.Fprintln(os.Stderr, "schedlock-peer-river:", err)
		os.Exit(1)
	}
}

func run(workers, batch int, duration time.Duration, jobs int64) error {
	conn := os.Getenv("SCHEDLOCK_PEER_DSN")
	switch {
	case conn == "":
		return errors.New("$SCHEDLOCK_PEER_DSN is empty")
	case workers < 1 || batch < 1:
		return errors.New("--workers and --batch must be at least 1")
	case (duration <= 0) == (jobs <= 0):
		return errors.New("give --duration or --jobs")
	}
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, conn)
	if err != nil {
		return err
	}
	defer pool.Close()
	var suffix [4]byte
	_, _ = rand.Read(suffix[:])
	schema := "schedlock_peer_river_" + hex.EncodeToString(suffix[:])
	if _, err := pool.Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize()); err != nil {
		return err
	}
	defer func() {
		cleanup, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, _ = pool.Exec(cleanup, "DROP SCHEMA "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
	}()
	driver := riverpgxv5.New(pool)
	migrator, err := rivermigrate.New(driver, &rivermigrate.Config{Schema: schema})
	if err != nil {
		return err
	}
	if _, err := migrator.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("river migrations: %w", err)
	}
	var done atomic.Int64
	ws := river.NewWorkers()
	river.AddWorker(ws, &noopWorker{done: &done})
	client, err := river.NewClient(driver, &river.Config{
		Schema:            schema,
		Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: workers * batch}},
		Workers:           ws,
		FetchCooldown:     river.FetchCooldownMin,
		FetchPollInterval: 10 * time.Millisecond,
		Logger:            nil,
	})
	if err != nil {
		return err
	}
	// Enough jobs that the queue never runs dry within the run.
	total := jobs
	if total <= 0 {
		total = max(20000, int64(duration.Seconds()*20000))
	}
	for inserted := int64(0); inserted < total; {
		n := min(total-inserted, 5000)
		params := make([]river.InsertManyParams, n)
		for i := range params {
			params[i] = river.InsertManyParams{Args: noopArgs{}}
		}
		if _, err := client.InsertManyFast(ctx, params); err != nil {
			return fmt.Errorf("insert jobs: %w", err)
		}
		inserted += n
	}
	start := time.Now()
	if err := client.Start(ctx); err != nil {
		return err
	}
	deadline := start.Add(duration)
	for {
		time.Sleep(time.Millisecond)
		if (jobs > 0 && done.Load() >= jobs) || (jobs <= 0 && !time.Now().Before(deadline)) {
			break
		}
		if time.Since(start) > time.Hour {
			return errors.New("the jobs were not worked within an hour")
		}
	}
	worked, seconds := done.Load(), time.Since(start).Seconds()
	stop, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = client.StopAndCancel(stop)
	return json.NewEncoder(os.Stdout).Encode(map[string]any{"jobs": worked, "seconds": seconds, "river": riverVersion})
}
