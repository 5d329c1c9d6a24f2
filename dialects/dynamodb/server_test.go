package dynamodb_test

import (
	"context"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects/dynamodb"
	"github.com/schedlock/schedlock/internal/livetest"
)

// dsnEnv names a live DynamoDB endpoint (dynalite in scripts/test.sh)
// for the live tests; without it they skip, and with it an endpoint that
// does not answer fails them.
const dsnEnv = livetest.DynamoDB

// liveDSN returns the live endpoint's DSN or skips t.
func liveDSN(t testing.TB) string { t.Helper(); return livetest.DSN(t, dsnEnv) }

// open opens dsn, closed when t ends.
func open(t testing.TB, dsn string) *dynamodb.Backend {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	b, err := dynamodb.Open(ctx, dsn)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

// openLive opens the live endpoint.
func openLive(t testing.TB) *dynamodb.Backend { t.Helper(); return open(t, liveDSN(t)) }
