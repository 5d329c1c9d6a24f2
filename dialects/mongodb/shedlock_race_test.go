package mongodb_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/schedlock/schedlock/checks"
	"github.com/schedlock/schedlock/dialects"
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

// raceShedLock races l against node on one name at a time: in every round
// both try at once, the winner holds a short critical section, and an
// overlap detector counts the holders inside it.
func raceShedLock(ctx context.Context, t *testing.T, l dialects.Locker, node shedlocksim.Node) {
	const rounds = 300
	var inside, doubles, schedlockWins, shedlockWins atomic.Int64
	critical := func(wins *atomic.Int64) {
		if inside.Add(1) > 1 {
			doubles.Add(1)
		}
		wins.Add(1)
		time.Sleep(200 * time.Microsecond)
		inside.Add(-1)
	}
	for round := range rounds {
		name := fmt.Sprintf("job-%d", round%7)
		var wg sync.WaitGroup
		start := make(chan struct{})
		errs := make(chan error, 2)
		wg.Go(func() {
			<-start
			lease, err := l.Acquire(ctx, name, dialects.Options{AtMost: 10 * time.Second, Owner: "schedlock-node"})
			if errors.Is(err, dialects.ErrHeld) {
				return
			}
			if err != nil {
				errs <- err
				return
			}
			critical(&schedlockWins)
			if err := lease.Release(ctx); err != nil {
				errs <- err
			}
		})
		wg.Go(func() {
			<-start
			held, ok, err := node.Lock(ctx, name, 10*time.Second)
			if err != nil || !ok {
				if err != nil {
					errs <- err
				}
				return
			}
			critical(&shedlockWins)
			if err := node.Unlock(ctx, held, 0); err != nil {
				errs <- err
			}
		})
		close(start)
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("round %d: %v", round, err)
		}
	}
	if d := doubles.Load(); d != 0 {
		t.Fatalf("%d double holds in %d rounds", d, rounds)
	}
	if schedlockWins.Load() == 0 || shedlockWins.Load() == 0 {
		t.Fatalf("schedlock won %d rounds, ShedLock %d: want both to win some", schedlockWins.Load(), shedlockWins.Load())
	}
	t.Logf("%d rounds: schedlock held %d times, ShedLock %d times, 0 double holds", rounds, schedlockWins.Load(), shedlockWins.Load())
}
