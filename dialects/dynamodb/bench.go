package dynamodb

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/benchops"
)

// The raw requests `schedlock bench` measures the engine against, on the
// backend's own SDK client and in the DSN's table (or "schedlock"): the
// textbook DynamoDB lock, one UpdateItem that sets an owner and a lease
// end under `attribute_not_exists(lock_until) OR lock_until <= :now`, and
// one DeleteItem conditioned on the owner. Each is one request, as each
// engine operation is, so a cycle is two requests on either side.
var (
	_ benchops.StoreBaseline = (*Backend)(nil)
	_ benchops.RoundTripper  = (*Backend)(nil)
)

// RoundTripSQL names the round trip: a strongly consistent GetItem.
func (*Backend) RoundTripSQL() string { return "GetItem (ConsistentRead)" }

// RawStoreOps implements benchops.StoreBaseline on a table of its own
// ("schedlock_bench_raw_" and random hex, the native key), created here
// and deleted by Close.
func (b *Backend) RawStoreOps(ctx context.Context) (benchops.StoreOps, error) {
	var rnd [4]byte
	_, _ = rand.Read(rnd[:])
	lk := &Locker{b: b, layout: newLayout(dialects.PresetSchedlock, "schedlock_bench_raw_"+hex.EncodeToString(rnd[:]))}
	if err := lk.CreateTable(ctx); err != nil {
		return benchops.StoreOps{}, err
	}
	l := lk.layout
	const owner = "schedlock-bench-raw"
	key := func(name string) map[string]types.AttributeValue { return l.keyOf("schedlock-bench-raw:" + name) }
	return benchops.StoreOps{
		RoundTrip: func(ctx context.Context) error {
			_, err := b.client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(l.table), Key: key("round-trip"), ConsistentRead: aws.Bool(true)})
			return err
		},
		TryLock: func(ctx context.Context, name string) (bool, error) {
			now := time.Now()
			_, err := b.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
				TableName:                 aws.String(l.table),
				Key:                       key(name),
				UpdateExpression:          aws.String("SET #u = :until, #b = :owner"),
				ConditionExpression:       aws.String("attribute_not_exists(#u) OR #u <= :now"),
				ExpressionAttributeNames:  map[string]string{"#u": l.until, "#b": l.by},
				ExpressionAttributeValues: map[string]types.AttributeValue{":until": sv(iso(now.Add(dialects.DefaultAtMost))), ":now": sv(iso(now)), ":owner": sv(owner)},
			})
			var cf *types.ConditionalCheckFailedException
			if errors.As(err, &cf) {
				return false, nil
			}
			return err == nil, err
		},
		Unlock: func(ctx context.Context, name string) error {
			_, err := b.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{
				TableName:                 aws.String(l.table),
				Key:                       key(name),
				ConditionExpression:       aws.String("#b = :owner"),
				ExpressionAttributeNames:  map[string]string{"#b": l.by},
				ExpressionAttributeValues: map[string]types.AttributeValue{":owner": sv(owner)},
			})
			var cf *types.ConditionalCheckFailedException
			if errors.As(err, &cf) {
				return fmt.Errorf("raw release of %q found it not held", name)
			}
			return err
		},
		Close: func() error {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			return lk.DropTable(ctx)
		},
	}, nil
}
