package benchkit

import (
	"context"
	"database/sql"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/sqlkit"
)

// Connection counts of Held, by where they were read.
const (
	// SourceServer: the distinct server sessions holding the locks, read
	// from the server's own lock views (the backend's SessionCounter).
	SourceServer = "server"
	// SourceClient: the pool's open connections (sql.DBStats), when the
	// backend cannot count on the server.
	SourceClient = "client"
	// SourceNone: not counted, on a store (not database/sql), whose
	// client's connections are its own affair.
	SourceNone = "none"
)

// Held is N distinct locks (session locks on a SQL database, leases on a
// store) taken 64 at a time by this process, held all at once, then
// released.
type Held struct {
	Strategy string `json:"strategy"`
	Locks    int    `json:"locks"`
	// Acquired is how many were taken; less than Locks when an Acquire
	// failed (Error says why).
	Acquired          int     `json:"acquired"`
	TakeAllSeconds    float64 `json:"take_all_seconds"`
	ReleaseAllSeconds float64 `json:"release_all_seconds"`
	// Connections is ServerSessions when known, else ClientOpenConnections;
	// ConnectionsSource says which.
	Connections           int    `json:"connections"`
	ConnectionsSource     string `json:"connections_source"`
	ServerSessions        *int   `json:"server_sessions"`
	ClientOpenConnections int    `json:"client_open_connections"`
	// Extra client memory while all were held, after garbage collection:
	// the runtime's live heap and the memory it took from the OS.
	ExtraHeapAllocBytes int64   `json:"extra_heap_alloc_bytes"`
	ExtraSysBytes       int64   `json:"extra_sys_bytes"`
	Error               *string `json:"error"`
}

// HoldMany takes locks distinct locks named prefix-0, prefix-1, …
// through locker (one of backend's), 64 at a time; counts the connections
// that hold them on a SQL database (server-side when the backend
// registered a SessionCounter, on a connection taken first; else the
// pool's) and the extra client memory; then releases them all. A failed
// Acquire ends the taking: what was taken is still counted and released,
// and the error is returned beside the result.
func HoldMany(ctx context.Context, backend dialects.Backend, locker dialects.Locker, prefix string, locks int, opts dialects.Options) (Held, error) {
	h := Held{Strategy: string(locker.Strategy()), Locks: locks, ConnectionsSource: SourceClient}
	db, _ := sqlkit.Of(backend)
	if db == nil {
		h.ConnectionsSource = SourceNone
	}
	names := make([]string, locks)
	for i := range names {
		names[i] = fmt.Sprintf("%s-%d", prefix, i)
	}
	leases := make([]dialects.Lease, 0, locks)
	var counter func(ctx context.Context, conn *sql.Conn, names []string) (int, error)
	if db != nil {
		counter = holdingCounter(backend, db)
	}
	var countConn *sql.Conn
	if counter != nil {
		c, err := pin(ctx, db.SQL)
		if err != nil {
			return h, err
		}
		countConn = c
		defer unpin(countConn, false)
	}
	before := memory()

	start := time.Now()
	taken := make([]dialects.Lease, locks)
	takeErr := inParallel(locks, func(i int) error {
		lease, err := locker.Acquire(ctx, names[i], opts)
		if err != nil {
			return fmt.Errorf("acquire lock %s: %w", names[i], err)
		}
		taken[i] = lease
		return nil
	})
	h.TakeAllSeconds = round(time.Since(start).Seconds(), 6)
	for _, lease := range taken {
		if lease != nil {
			leases = append(leases, lease)
		}
	}
	h.Acquired = len(leases)

	after := memory()
	h.ExtraHeapAllocBytes = int64(after.HeapAlloc) - int64(before.HeapAlloc)
	h.ExtraSysBytes = int64(after.Sys) - int64(before.Sys)
	// The lock connections are taken from the pool and kept: they are its
	// connections in use (idle ones left by earlier measurements are not
	// counted).
	if db != nil {
		h.ClientOpenConnections = db.SQL.Stats().InUse
		if countConn != nil {
			h.ClientOpenConnections-- // the counting connection holds no lock
		}
		h.Connections = h.ClientOpenConnections
	}
	var countErr error
	if counter != nil && len(leases) > 0 {
		n, err := counter(ctx, countConn, names[:len(leases)])
		if err == nil {
			h.ServerSessions = &n
			h.Connections, h.ConnectionsSource = n, SourceServer
		} else {
			countErr = fmt.Errorf("count the sessions holding the locks: %w", err)
		}
	}

	start = time.Now()
	rctx := context.WithoutCancel(ctx)
	releaseErr := inParallel(len(leases), func(i int) error {
		if err := leases[i].Release(rctx); err != nil {
			return fmt.Errorf("release lock %s: %w", leases[i].Name(), err)
		}
		return nil
	})
	h.ReleaseAllSeconds = round(time.Since(start).Seconds(), 6)

	for _, err := range []error{takeErr, releaseErr, countErr} {
		if err != nil {
			msg := err.Error()
			h.Error = &msg
			return h, err
		}
	}
	return h, nil
}

// takers is how many goroutines HoldMany takes and releases the locks
// with, as a process running many jobs at once would.
const takers = 64

// inParallel runs fn(0..n-1) on takers goroutines; the first error stops
// the calls not yet started and is returned.
func inParallel(n int, fn func(i int) error) error {
	var next atomic.Int64
	var failed atomic.Bool
	var first error
	var once sync.Once
	var wg sync.WaitGroup
	for range min(takers, n) {
		wg.Go(func() {
			for !failed.Load() {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if err := fn(i); err != nil {
					once.Do(func() { first = err })
					failed.Store(true)
				}
			}
		})
	}
	wg.Wait()
	return first
}

// memory reads the runtime's memory statistics after a full collection.
func memory() runtime.MemStats {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m
}
