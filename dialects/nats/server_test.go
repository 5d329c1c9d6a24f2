package nats_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/schedlock/schedlock/dialects/nats"
	"github.com/schedlock/schedlock/internal/livetest"
)

// dsnEnv names a live NATS server for the live tests; without it they
// skip, and with it an unreachable server fails them.
const dsnEnv = livetest.NATS

// embedded starts a NATS server with JetStream in this process, on a
// free loopback port and a temporary store, stopped when t ends. It
// returns its DSN.
func embedded(t testing.TB) string {
	t.Helper()
	s := embeddedServer(t, &server.Options{JetStream: true, StoreDir: t.TempDir()})
	return "nats://" + s.Addr().String() + "/schedlock"
}

// embeddedServer starts a NATS server with opts in this process, on a
// free loopback port, without logs or signal handlers, stopped when t
// ends.
func embeddedServer(t testing.TB, opts *server.Options) *server.Server {
	t.Helper()
	opts.Host, opts.Port, opts.NoLog, opts.NoSigs = "127.0.0.1", -1, true, true
	s, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("embedded nats-server did not start")
	}
	t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	return s
}

// open opens dsn, closed when t ends.
func open(t testing.TB, dsn string) *nats.Backend {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b, err := nats.Open(ctx, dsn)
	if err != nil {
		t.Fatalf("open %s: %v", dsn, err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

// liveDSN returns the live server's DSN or skips t.
func liveDSN(t testing.TB) string { t.Helper(); return livetest.DSN(t, dsnEnv) }
