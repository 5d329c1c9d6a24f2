// Package shedlocksim is a ShedLock node for tests: it sends exactly the
// DynamoDB requests of ShedLock's DynamoDBLockProvider for the AWS SDK v2
// (lukas-krecan/ShedLock, providers/dynamodb/shedlock-provider-dynamodb2,
// DynamoDBLockProvider.java), so tests can prove that schedlock's
// shedlock preset and a ShedLock application exclude each other on one
// table.
//
// What ShedLock sends:
//
//   - lock: UpdateItem on the key {_id: S name} with the UpdateExpression
//     "set lockUntil = :lockUntil, lockedAt = :lockedAt, lockedBy = :lockedBy",
//     the ConditionExpression
//     "lockUntil <= :lockedAt or attribute_not_exists(lockUntil)" and
//     ReturnValues UPDATED_NEW; :lockedAt is the application's now and
//     :lockUntil its lockAtMostUntil, both as Utils.toIsoString writes
//     instants (UTC, three fraction digits, a Z), :lockedBy the host
//     name. A ConditionalCheckFailedException means another holds it.
//   - unlock: UpdateItem "set lockUntil = :lockUntil" with the later of
//     now and lockAtLeastUntil, ReturnValues UPDATED_NEW, and no
//     condition at all: ShedLock's unlock does not check the owner.
//
// Nothing else: no read, no token, every time on the application's clock.
// This package is imported by tests only.
package shedlocksim

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// ShedLock's strings (DynamoDBLockProvider's OBTAIN_LOCK_QUERY,
// OBTAIN_LOCK_CONDITION and RELEASE_LOCK_QUERY, as they expand).
const (
	obtainLockQuery     = "set lockUntil = :lockUntil, lockedAt = :lockedAt, lockedBy = :lockedBy"
	obtainLockCondition = "lockUntil <= :lockedAt or attribute_not_exists(lockUntil)"
	releaseLockQuery    = "set lockUntil = :lockUntil"
)

// Node is one ShedLock application's lock provider on one table.
type Node struct {
	Client *dynamodb.Client
	Table  string
	// Host stands for Utils.getHostname(); "" is this host's name.
	Host string
}

// Lock is a lock the node holds: its name and lockedAt.
type Lock struct {
	Name     string
	LockedAt time.Time
}

// isoString is Utils.toIsoString.
func isoString(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

func attr(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }

// Lock is lock(): ok is false when another holds the lock.
func (n Node) Lock(ctx context.Context, name string, atMost time.Duration) (l Lock, ok bool, err error) {
	host := n.Host
	if host == "" {
		host, _ = os.Hostname()
	}
	now := time.Now()
	_, err = n.Client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:           aws.String(n.Table),
		Key:                 map[string]types.AttributeValue{"_id": attr(name)},
		UpdateExpression:    aws.String(obtainLockQuery),
		ConditionExpression: aws.String(obtainLockCondition),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":lockUntil": attr(isoString(now.Add(atMost))),
			":lockedAt":  attr(isoString(now)),
			":lockedBy":  attr(host),
		},
		ReturnValues: types.ReturnValueUpdatedNew,
	})
	var cf *types.ConditionalCheckFailedException
	if errors.As(err, &cf) {
		return Lock{}, false, nil
	}
	if err != nil {
		return Lock{}, false, err
	}
	return Lock{Name: name, LockedAt: now}, true, nil
}

// Unlock is doUnlock(): lockUntil set to the later of now and locked-at
// plus atLeast, unconditionally.
func (n Node) Unlock(ctx context.Context, l Lock, atLeast time.Duration) error {
	until := time.Now()
	if u := l.LockedAt.Add(atLeast); u.After(until) {
		until = u
	}
	_, err := n.Client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(n.Table),
		Key:                       map[string]types.AttributeValue{"_id": attr(l.Name)},
		UpdateExpression:          aws.String(releaseLockQuery),
		ExpressionAttributeValues: map[string]types.AttributeValue{":lockUntil": attr(isoString(until))},
		ReturnValues:              types.ReturnValueUpdatedNew,
	})
	return err
}
