package mongodb

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/dialecttest"
	"github.com/schedlock/schedlock/internal/livetest"
)

// BenchmarkCycleRatio interleaves three lock cycles on the live server,
// one after the other in every iteration, in a random order each time,
// all on the backend's one client, so that all three see the same load:
//
//   - engine: the engine's Acquire and Release (findOneAndUpdate with
//     upsert and $inc, then updateOne; the document stays);
//   - raw: the raw baseline of `schedlock bench` (RawStoreOps:
//     findOneAndUpdate with upsert, then deleteOne);
//   - shedlock: ShedLock's own cycle on the driver (findOneAndUpdate with
//     upsert, then findOneAndUpdate by _id setting lockUntil to now; the
//     document stays, as the engine's does).
//
// It reports each one's cycles per second and the ratios:
//
//	go test ./dialects/mongodb -run '^$' -bench CycleRatio -benchtime 10s -count 3
func BenchmarkCycleRatio(b *testing.B) {
	ctx := context.Background()
	mb, err := Open(ctx, livetest.DSN(b, livetest.MongoDB))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = mb.Close() })
	l, err := mb.LeaseLocker(dialects.Table{Name: "schedlock_bench_ratio"})
	if err != nil {
		b.Fatal(err)
	}
	locker := l.(*Locker)
	if err := locker.CreateTable(ctx); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = locker.DropTable(ctx) })
	raw, err := mb.RawStoreOps(ctx)
	if err != nil {
		b.Fatal(err)
	}
	shed := mb.db.Collection("schedlock_bench_ratio_shedlock")
	opts := dialects.Options{Owner: "bench", AtMost: time.Minute}
	cycles := []dialecttest.Cycle{
		{Name: "engine", Run: func() error {
			lease, err := locker.Acquire(ctx, "engine", opts)
			if err != nil {
				return err
			}
			return lease.Release(ctx)
		}},
		{Name: "raw", Run: func() error {
			if _, err := raw.TryLock(ctx, "ratio"); err != nil {
				return err
			}
			return raw.Unlock(ctx, "ratio")
		}},
		{Name: "shedlock", Run: func() error {
			now := mb.serverNow()
			err := shed.FindOneAndUpdate(ctx, bson.D{{Key: "_id", Value: "ratio"}, {Key: "lockUntil", Value: bson.D{{Key: "$lte", Value: now}}}},
				bson.D{{Key: "$set", Value: bson.D{{Key: "lockUntil", Value: now.Add(time.Minute)}, {Key: "lockedAt", Value: now}, {Key: "lockedBy", Value: "bench"}}}},
				options.FindOneAndUpdate().SetUpsert(true)).Err()
			if err != nil && !errors.Is(err, mongo.ErrNoDocuments) {
				return err
			}
			return shed.FindOneAndUpdate(ctx, bson.D{{Key: "_id", Value: "ratio"}},
				bson.D{{Key: "$set", Value: bson.D{{Key: "lockUntil", Value: mb.serverNow()}}}}).Err()
		}},
	}
	b.Cleanup(func() { _ = shed.Drop(ctx) })
	took := dialecttest.Interleave(b, cycles)
	b.ReportMetric(took["raw"]/took["engine"], "engine/raw")
	b.ReportMetric(took["shedlock"]/took["engine"], "engine/shedlock")
}
