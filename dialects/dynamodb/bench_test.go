package dynamodb_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	sdk "github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/internal/benchkit"
)

// BenchmarkCycles runs b.N engine lock cycles and reports the DynamoDB
// requests each cost (the backend counts every HTTP request its client
// sends, SDK retries included: one acquire and one release, so 2), and
// beside them b.N raw UpdateItem + DeleteItem cycles (the bench support's
// raw requests) on the live endpoint:
//
//	go test ./dialects/dynamodb -run '^$' -bench Cycles -benchtime 2000x
func BenchmarkCycles(b *testing.B) {
	db := openLive(b)
	ctx := context.Background()
	b.Run("engine", func(b *testing.B) {
		l := nativeTable(b, db, "_bench")
		opts := dialects.Options{Owner: "bench", AtMost: time.Minute}
		before := db.Requests()
		b.ResetTimer()
		for range b.N {
			lease, err := l.Acquire(ctx, "cycle", opts)
			if err != nil {
				b.Fatal(err)
			}
			if err := lease.Release(ctx); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		b.ReportMetric(float64(db.Requests()-before)/float64(b.N), "requests/cycle")
	})
	b.Run("raw", func(b *testing.B) {
		rep, err := benchkit.Run(ctx, db, benchkit.Plan{Cycles: true, Budget: benchkit.Budget{Cycles: int64(b.N)}})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(rep.Cycles[0].Raw.CyclesPerSecond, "raw-cycles/s")
		b.ReportMetric(rep.Cycles[0].Engine.CyclesPerSecond, "engine-cycles/s")
		b.ReportMetric(*rep.Cycles[0].EngineToRaw, "engine/raw")
	})
}

// TestRequestsPerCycle: an acquire, a refresh and a release are one
// request each, a refused acquire too, on both layouts.
func TestRequestsPerCycle(t *testing.T) {
	db := openLive(t)
	ctx := context.Background()
	for _, preset := range []string{dialects.PresetSchedlock, dialects.PresetShedlock} {
		var l dialects.LeaseLocker
		if preset == dialects.PresetShedlock {
			l, _ = shedlockTable(t, db)
		} else {
			l = nativeTable(t, db, "_req")
		}
		// The table check (one DescribeTable) is made once per locker.
		if _, _, err := l.Inspect(ctx, "warm-up"); err != nil {
			t.Fatal(err)
		}
		count := func(what string, op func() error) {
			t.Helper()
			before := db.Requests()
			if err := op(); err != nil {
				t.Fatalf("%s %s: %v", preset, what, err)
			}
			if n := db.Requests() - before; n != 1 {
				t.Errorf("%s: %s sent %d requests, want 1", preset, what, n)
			}
		}
		var lease dialects.Lease
		count("acquire", func() (err error) {
			lease, err = l.Acquire(ctx, "cycle", dialects.Options{Owner: "a", AtMost: time.Minute})
			return err
		})
		count("refused acquire", func() error {
			_, err := l.Acquire(ctx, "cycle", dialects.Options{Owner: "b", AtMost: time.Minute})
			if err == nil {
				t.Fatal("a second owner got the lock")
			}
			return nil
		})
		count("refresh", func() error { return lease.Refresh(ctx) })
		count("release", func() error { return lease.Release(ctx) })
	}
}

// TestListingRequests: a listing of a named table is a DescribeTable and
// one Scan (a page: the table is small); the listing's own tables given
// back as resolved (the exporter's repeated listing) are one Scan alone.
func TestListingRequests(t *testing.T) {
	db := openLive(t)
	ctx := context.Background()
	l := nativeTable(t, db, "_list")
	lease, err := l.Acquire(ctx, "listed", dialects.Options{Owner: "a", AtMost: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer lease.Release(ctx)
	before := db.Requests()
	listing, err := db.ListLocks(ctx, dialects.ListOptions{Tables: []dialects.Table{{Name: l.Schema().Table}}})
	if err != nil {
		t.Fatal(err)
	}
	if n := db.Requests() - before; n != 2 || len(listing.Locks) != 1 || listing.Locks[0].State != dialects.StateHeld {
		t.Fatalf("listing: %d requests, %+v; want 2 and the held lock", n, listing.Locks)
	}
	before = db.Requests()
	again, err := db.ListLocks(ctx, dialects.ListOptions{Tables: listing.Tables, Resolved: true})
	if err != nil {
		t.Fatal(err)
	}
	if n := db.Requests() - before; n != 1 || len(again.Locks) != 1 {
		t.Fatalf("resolved listing: %d requests, %d locks; want 1 Scan and the lock", n, len(again.Locks))
	}
}

// TestListingPages: a table over DynamoDB's 1 MB page is listed whole,
// page by page (items padded to 300 KB, so four of them take two pages).
func TestListingPages(t *testing.T) {
	db := openLive(t)
	ctx := context.Background()
	l := nativeTable(t, db, "_pages")
	pad := strings.Repeat("p", 300<<10)
	for i := range 4 {
		_, err := db.Client().PutItem(ctx, &sdk.PutItemInput{TableName: aws.String(l.Schema().Table), Item: map[string]types.AttributeValue{
			"name": &types.AttributeValueMemberS{Value: fmt.Sprintf("padded-%d", i)}, "locked_by": &types.AttributeValueMemberS{Value: "pad"},
			"lock_until": &types.AttributeValueMemberS{Value: "2099-01-01T00:00:00.000Z"}, "pad": &types.AttributeValueMemberS{Value: pad}}})
		if err != nil {
			t.Fatal(err)
		}
	}
	before := db.Requests()
	listing, err := db.ListLocks(ctx, dialects.ListOptions{Tables: []dialects.Table{{Name: l.Schema().Table}}, Resolved: true})
	if err != nil {
		t.Fatal(err)
	}
	if n := db.Requests() - before; len(listing.Locks) != 4 || n < 2 {
		t.Fatalf("listed %d locks in %d requests; want all 4, over at least 2 pages", len(listing.Locks), n)
	}
}
