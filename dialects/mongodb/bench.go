package mongodb

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/benchops"
)

// The raw operations `schedlock bench` measures the engine against: the
// lock a developer writes by hand with the driver, on the backend's own
// client (the same connection pool and write concern) in a collection of
// its own — findOneAndUpdate with upsert on an expired or missing
// document (ShedLock's acquire), and deleteOne by _id and owner.
var (
	_ benchops.StoreBaseline = (*Backend)(nil)
	_ benchops.RoundTripper  = (*Backend)(nil)
)

// RawCollection is the collection of the raw baseline.
const RawCollection = "schedlock_bench_raw"

// RoundTripSQL names the round trip: the ping command.
func (*Backend) RoundTripSQL() string { return "ping" }

// RawStoreOps implements benchops.StoreBaseline.
func (b *Backend) RawStoreOps(ctx context.Context) (benchops.StoreOps, error) {
	coll := b.db.Collection(RawCollection)
	const owner = "schedlock-bench-raw"
	fo := options.FindOneAndUpdate().SetUpsert(true)
	return benchops.StoreOps{
		RoundTrip: func(ctx context.Context) error {
			return b.db.RunCommand(ctx, bson.D{{Key: "ping", Value: 1}}).Err()
		},
		TryLock: func(ctx context.Context, name string) (bool, error) {
			now := b.serverNow()
			err := coll.FindOneAndUpdate(ctx,
				bson.D{{Key: "_id", Value: name}, {Key: "lockUntil", Value: bson.D{{Key: "$lte", Value: now}}}},
				bson.D{{Key: "$set", Value: bson.D{{Key: "lockUntil", Value: now.Add(dialects.DefaultAtMost)}, {Key: "lockedAt", Value: now}, {Key: "lockedBy", Value: owner}}}},
				fo).Err()
			switch {
			case mongo.IsDuplicateKeyError(err):
				return false, nil
			case err == nil || err == mongo.ErrNoDocuments:
				return true, nil
			}
			return false, err
		},
		Unlock: func(ctx context.Context, name string) error {
			res, err := coll.DeleteOne(ctx, bson.D{{Key: "_id", Value: name}, {Key: "lockedBy", Value: owner}})
			if err == nil && res.DeletedCount != 1 {
				err = fmt.Errorf("raw release of %q found it not held", name)
			}
			return err
		},
	}, nil
}
