// Package shedlocksim is a ShedLock node for tests: it sends exactly the
// MongoDB operations of ShedLock's MongoLockProvider (repository
// lukas-krecan/ShedLock, providers/mongo/shedlock-provider-mongo,
// MongoLockProvider.java), so tests can prove that schedlock's shedlock
// preset and a ShedLock application exclude each other on one collection.
//
// What ShedLock sends, on the collection (default "shedLock"):
//
//   - lock: findOneAndUpdate({_id: name, lockUntil: {$lte: now}},
//     {$set: {lockUntil: now + lockAtMostFor, lockedAt: now, lockedBy: host}},
//     upsert) — a duplicate key error (code 11000) means the lock is held;
//   - extend: findOneAndUpdate({_id: name, lockUntil: {$gt: now},
//     lockedBy: host}, {$set: {lockUntil: now + lockAtMostFor}});
//   - unlock: findOneAndUpdate({_id: name}, {$set: {lockUntil:
//     max(now, lockedAt + lockAtLeastFor)}}) — by _id alone, without an
//     owner check.
//
// now is the application's clock (ClockProvider.now()); ShedLock writes
// no token. This package is imported by tests only.
package shedlocksim

import (
	"context"
	"errors"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// Node is one ShedLock application on a collection.
type Node struct {
	Coll *mongo.Collection
	// Host is lockedBy (ShedLock's Utils.getHostname()).
	Host string
}

// Lock is a lock the node took.
type Lock struct {
	Name     string
	LockedAt time.Time
}

// Lock is ShedLock's lock(): ok is false when the lock is held.
func (n Node) Lock(ctx context.Context, name string, atMost time.Duration) (Lock, bool, error) {
	now := time.Now().UTC().Truncate(time.Millisecond)
	err := n.Coll.FindOneAndUpdate(ctx,
		bson.D{{Key: "_id", Value: name}, {Key: "lockUntil", Value: bson.D{{Key: "$lte", Value: now}}}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "lockUntil", Value: now.Add(atMost)}, {Key: "lockedAt", Value: now}, {Key: "lockedBy", Value: n.Host}}}},
		options.FindOneAndUpdate().SetUpsert(true)).Err()
	var se mongo.ServerError
	switch {
	case errors.As(err, &se) && se.HasErrorCode(11000):
		return Lock{}, false, nil
	case err != nil && !errors.Is(err, mongo.ErrNoDocuments):
		return Lock{}, false, err
	}
	return Lock{Name: name, LockedAt: now}, true, nil
}

// Extend is ShedLock's extend: ok is false when the node no longer
// holds the lock.
func (n Node) Extend(ctx context.Context, l Lock, atMost time.Duration) (bool, error) {
	now := time.Now().UTC().Truncate(time.Millisecond)
	err := n.Coll.FindOneAndUpdate(ctx,
		bson.D{{Key: "_id", Value: l.Name}, {Key: "lockUntil", Value: bson.D{{Key: "$gt", Value: now}}}, {Key: "lockedBy", Value: n.Host}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "lockUntil", Value: now.Add(atMost)}}}}).Err()
	if errors.Is(err, mongo.ErrNoDocuments) {
		return false, nil
	}
	return err == nil, err
}

// Unlock is ShedLock's unlock: lockUntil becomes the later of now and
// lockedAt + atLeast, matched by _id alone.
func (n Node) Unlock(ctx context.Context, l Lock, atLeast time.Duration) error {
	until := time.Now().UTC().Truncate(time.Millisecond)
	if keep := l.LockedAt.Add(atLeast); keep.After(until) {
		until = keep
	}
	err := n.Coll.FindOneAndUpdate(ctx, bson.D{{Key: "_id", Value: l.Name}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "lockUntil", Value: until}}}}).Err()
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil
	}
	return err
}
