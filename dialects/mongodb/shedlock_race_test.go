package mongodb_test

import (
	"context"
	"net/url"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/schedlock/schedlock/checks"
	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/dialecttest"
	"github.com/schedlock/schedlock/dialects/mongodb/shedlocksim"
	"github.com/schedlock/schedlock/lock"
)

// shedlockNode is a ShedLock node on coll of the live server (through
// dsn), with a driver client of its own, as a Java application has.
func shedlockNode(t *testing.T, dsn, db, coll string) shedlocksim.Node {
	t.Helper()
	c, err := mongo.Connect(options.Client().ApplyURI(dsn))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Disconnect(context.Background()) })
	return shedlocksim.Node{Coll: c.Database(db).Collection(coll), Host: "shedlock-host"}
}

// TestShedlockPresetExcludesShedLock races schedlock's shedlock preset,
// opened through lock.Open with x-preset=shedlock, against a ShedLock
// node sending MongoLockProvider's exact operations on the same
// collection: 300 rounds, both win some, never two at once.
func TestShedlockPresetExcludesShedLock(t *testing.T) {
	dsn := serialDSN(t)
	coll := checks.NewPrefix() + "_shedLock"
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b := open(t, dsn)
	tl, err := b.LeaseLocker(dialects.Table{Preset: dialects.PresetShedlock, Name: coll})
	if err != nil {
		t.Fatal(err)
	}
	if err := tl.(dialects.TableCreator).CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tl.(dialects.TableDropper).DropTable(context.Background()) })
	db, err := lock.Open(ctx, dsn+"?x-preset=shedlock&x-table="+url.QueryEscape(coll))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	node := shedlockNode(t, dsn, b.Database().Name(), coll)
	raceShedLock(ctx, t, libraryLocker{db}, node)
	// ShedLock's documents are what it wrote: no field of schedlock's own.
	cur, err := node.Coll.Find(ctx, bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	var docs []bson.M
	if err := cur.All(ctx, &docs); err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		if len(d) != 4 || d["lockUntil"] == nil || d["lockedAt"] == nil || d["lockedBy"] == nil {
			t.Errorf("document %v is not ShedLock's {_id, lockUntil, lockedAt, lockedBy}", d)
		}
	}
}

// libraryLocker is a *lock.DB as the engine's Locker.
type libraryLocker struct{ *lock.DB }

func (l libraryLocker) Acquire(ctx context.Context, name string, opts dialects.Options) (dialects.Lease, error) {
	return l.DB.Acquire(ctx, name, lock.Options(opts))
}

// raceShedLock races l against node (dialecttest.RaceShedLock).
func raceShedLock(ctx context.Context, t *testing.T, l dialects.Locker, node shedlocksim.Node) {
	dialecttest.RaceShedLock(ctx, t, l, "job-%d", func(ctx context.Context, name string, atMost time.Duration) (func(context.Context) error, bool, error) {
		held, ok, err := node.Lock(ctx, name, atMost)
		return func(ctx context.Context) error { return node.Unlock(ctx, held, 0) }, ok, err
	})
}
