package dynamodb

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/schedlock/schedlock/dialects"
)

// MaxNameBytes is the longest lock name: DynamoDB's limit on a partition
// key (2048 bytes of UTF-8). A longer name is refused, not mapped, so
// that the item's key is the name as ShedLock writes it.
const MaxNameBytes = 2048

// Locker is the lease locker on one table. It implements
// dialects.LeaseLocker, TableCreator and TableDropper.
type Locker struct {
	b      *Backend
	layout layout

	readyMu sync.Mutex
	ready   bool // the table was found with the right key schema
}

var (
	_ dialects.LeaseLocker  = (*Locker)(nil)
	_ dialects.TableCreator = (*Locker)(nil)
	_ dialects.TableDropper = (*Locker)(nil)
)

// Strategy reports StrategyTable.
func (l *Locker) Strategy() dialects.Strategy { return dialects.StrategyTable }

// Schema implements dialects.LeaseLocker: the preset's attribute names,
// Table the DynamoDB table.
func (l *Locker) Schema() dialects.Schema { return l.layout.schema }

// keySchemaWanted says the key schema the layout needs.
func (l *Locker) keySchemaWanted() string {
	return fmt.Sprintf("%s (S, HASH) as its only key", l.layout.key)
}

// missing is the error of a table that does not exist.
func (l *Locker) missing() error {
	return &dialects.MissingTableError{Table: l.layout.table,
		CreateSQL: fmt.Sprintf("(DynamoDB table %s with the key %s, on demand billing)", l.layout.table, l.keySchemaWanted())}
}

// check reads the table once (DescribeTable; for the DSN's table the
// description Open read) and refuses one that is missing or whose key
// schema is not the layout's; once it passed it is not read again
// (DropTable forgets it).
func (l *Locker) check(ctx context.Context) error {
	l.readyMu.Lock()
	defer l.readyMu.Unlock()
	if l.ready {
		return nil
	}
	if t := l.b.opened.Load(); t != nil && aws.ToString(t.TableName) == l.layout.table && l.b.opened.CompareAndSwap(t, nil) {
		if err := l.checkKeys(t); err != nil {
			return err
		}
		l.ready = true
		return nil
	}
	out, err := l.b.client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(l.layout.table)})
	var nf *types.ResourceNotFoundException
	switch {
	case errors.As(err, &nf):
		return l.missing()
	case isAccessDenied(err):
		// A user that may not describe the table may still lock on it:
		// its requests then say what is wrong.
		l.ready = true
		return nil
	case err != nil:
		return l.b.classify("describe table "+l.layout.table, err)
	}
	if err := l.checkKeys(out.Table); err != nil {
		return err
	}
	l.ready = true
	return nil
}

// checkKeys refuses a table whose key is not the layout's.
func (l *Locker) checkKeys(t *types.TableDescription) error {
	if t == nil {
		return l.missing()
	}
	ok := len(t.KeySchema) == 1 && aws.ToString(t.KeySchema[0].AttributeName) == l.layout.key && t.KeySchema[0].KeyType == types.KeyTypeHash
	if ok {
		for _, d := range t.AttributeDefinitions {
			if aws.ToString(d.AttributeName) == l.layout.key && d.AttributeType != types.ScalarAttributeTypeS {
				ok = false
			}
		}
	}
	if !ok {
		return dialects.Invalidf("DynamoDB table %s has the key %s; the %s layout needs %s", l.layout.table,
			describeKeys(t.KeySchema, t.AttributeDefinitions), l.layout.schema.Preset, l.keySchemaWanted())
	}
	if t.TableStatus == types.TableStatusCreating {
		return dialects.Unreachable(fmt.Errorf("DynamoDB table %s is still being created", l.layout.table))
	}
	return nil
}

// CreateTable creates the table (the layout's key, on demand billing)
// and waits until it is active; a table that exists is checked instead.
func (l *Locker) CreateTable(ctx context.Context) error {
	_, err := l.b.client.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:            aws.String(l.layout.table),
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String(l.layout.key), KeyType: types.KeyTypeHash}},
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String(l.layout.key), AttributeType: types.ScalarAttributeTypeS}},
		BillingMode:          types.BillingModePayPerRequest,
	})
	var inUse *types.ResourceInUseException
	if err != nil && !errors.As(err, &inUse) {
		return dialects.Wrap(Name, "create table", l.b.classify("create table "+l.layout.table, err))
	}
	for {
		out, err := l.b.client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(l.layout.table)})
		if err != nil {
			return dialects.Wrap(Name, "create table", l.b.classify("describe table "+l.layout.table, err))
		}
		if out.Table.TableStatus != types.TableStatusCreating {
			return dialects.Wrap(Name, "create table", l.checkKeys(out.Table))
		}
		t := time.NewTimer(50 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// DropTable deletes the table and waits until it is gone; leases on it
// end at their next request.
func (l *Locker) DropTable(ctx context.Context) error {
	l.readyMu.Lock()
	l.ready = false
	l.b.opened.Store(nil)
	l.readyMu.Unlock()
	_, err := l.b.client.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(l.layout.table)})
	var nf *types.ResourceNotFoundException
	if errors.As(err, &nf) {
		return nil
	}
	if err != nil {
		return dialects.Wrap(Name, "drop table", l.b.classify("delete table "+l.layout.table, err))
	}
	for {
		_, err := l.b.client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(l.layout.table)})
		if errors.As(err, &nf) {
			return nil
		}
		if err != nil {
			return dialects.Wrap(Name, "drop table", l.b.classify("describe table "+l.layout.table, err))
		}
		t := time.NewTimer(50 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// checkName refuses a name no lock may have, and one longer than the key
// allows.
func (l *Locker) checkName(name string) error {
	if err := dialects.CheckName(name); err != nil {
		return err
	}
	if len(name) > MaxNameBytes {
		return &dialects.NameTooLongError{Name: name, Table: l.layout.table,
			Column: dialects.NameColumn{Column: l.layout.key, Type: "S (partition key)", Width: MaxNameBytes, Unit: dialects.NameUnitBytes}}
	}
	return nil
}

// Acquire implements dialects.Locker: one UpdateItem per try, tried again
// until opts.Wait has passed while the lock is held or DynamoDB is
// unavailable (throttled, unreachable).
func (l *Locker) Acquire(ctx context.Context, name string, opts dialects.Options) (dialects.Lease, error) {
	if err := l.checkName(name); err != nil {
		return nil, err
	}
	opts, err := opts.Normalize()
	if err != nil {
		return nil, err
	}
	lease, err := dialects.RetryAcquire(ctx, opts, func() (dialects.Lease, error) { return l.try(ctx, name, opts) }, unavailable)
	return lease, dialects.Wrap(Name, "acquire", err)
}

// acquireInput is the acquire request: ShedLock's UpdateItem (its SET and
// its condition), with ADD of the token on the native layout.
func (l *Locker) acquireInput(name, owner string, now, until time.Time) *dynamodb.UpdateItemInput {
	update := "SET #u = :until, #a = :now, #b = :owner"
	values := map[string]types.AttributeValue{":until": sv(iso(until)), ":now": sv(iso(now)), ":owner": sv(owner)}
	if l.layout.token != "" {
		update += " ADD #t :one"
		values[":one"] = &types.AttributeValueMemberN{Value: "1"}
	}
	return &dynamodb.UpdateItemInput{
		TableName:                           aws.String(l.layout.table),
		Key:                                 l.layout.keyOf(name),
		UpdateExpression:                    aws.String(update),
		ConditionExpression:                 aws.String("attribute_not_exists(#u) OR #u <= :now"),
		ExpressionAttributeNames:            l.layout.names(true),
		ExpressionAttributeValues:           values,
		ReturnValues:                        types.ReturnValueUpdatedNew,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}
}

// try sends the acquire once (dialects.Settled: a request sent is waited
// for, and a lock it took as ctx ended is released again).
func (l *Locker) try(ctx context.Context, name string, opts dialects.Options) (dialects.Lease, error) {
	if err := l.check(ctx); err != nil {
		return nil, err
	}
	// The lease starts at the client's now, cut to the millisecond that
	// the stored instants keep, so the holder's end is never after the
	// stored one.
	now := time.Now().Truncate(time.Millisecond)
	in := l.acquireInput(name, opts.Owner, now, storedEnd(now, opts.AtMost))
	out, err := dialects.Settled(ctx, func(ctx context.Context) (*dynamodb.UpdateItemOutput, error) {
		return l.b.client.UpdateItem(ctx, in)
	})
	var token int64
	var cf *types.ConditionalCheckFailedException
	switch {
	case errors.As(err, &cf):
		found, ok := l.layout.decode(cf.Item)
		if !ok || found.owner != opts.Owner || found.lockedRaw != iso(now) {
			held := &dialects.HeldError{Name: name}
			if ok {
				held.Holder, held.Until = found.owner, found.until
			}
			return nil, held
		}
		// Our own write, answered to a retry of the SDK's after the first
		// answer was lost: the lock is ours.
		token = found.token
	case err != nil:
		var nf *types.ResourceNotFoundException
		if errors.As(err, &nf) {
			l.forget()
			return nil, l.missing()
		}
		return nil, l.b.classify("acquire", err)
	default:
		if v, ok := out.Attributes[l.layout.token].(*types.AttributeValueMemberN); ok && l.layout.token != "" {
			token, _ = strconv.ParseInt(v.Value, 10, 64)
		}
	}
	s := l.newLease(name, opts, false, now.Add(opts.AtMost))
	s.token, s.lockedAt = token, iso(now)
	if !l.b.track(s) {
		return nil, dialects.Wrap(Name, "acquire", fmt.Errorf("%w: the backend is closed", dialects.ErrLeaseLost))
	}
	if err := ctx.Err(); err != nil {
		s.atLeast = 0
		return nil, dialects.Abandon(ctx, err, s.Release)
	}
	return s, nil
}

// isNotFound reports DynamoDB's missing table.
func isNotFound(err error) bool {
	var nf *types.ResourceNotFoundException
	return errors.As(err, &nf)
}

// forget makes the next request check the table again.
func (l *Locker) forget() {
	l.readyMu.Lock()
	l.ready = false
	l.readyMu.Unlock()
}

// Inspect implements dialects.LeaseLocker: one strongly consistent
// GetItem; the times are the writers' clocks, DBNow this host's.
func (l *Locker) Inspect(ctx context.Context, name string) (dialects.Row, bool, error) {
	if err := l.checkName(name); err != nil {
		return dialects.Row{}, false, err
	}
	if err := l.check(ctx); err != nil {
		return dialects.Row{}, false, err
	}
	it, found, err := l.get(ctx, name)
	if err != nil || !found {
		return dialects.Row{Name: name, DBNow: time.Now().UTC(), HostTimes: true}, false, err
	}
	return it.row(time.Now()), true, nil
}

// get reads the item of name with a strongly consistent GetItem.
func (l *Locker) get(ctx context.Context, name string) (item, bool, error) {
	out, err := l.b.client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(l.layout.table), Key: l.layout.keyOf(name), ConsistentRead: aws.Bool(true)})
	if err != nil {
		var nf *types.ResourceNotFoundException
		if errors.As(err, &nf) {
			l.forget()
			return item{}, false, l.missing()
		}
		return item{}, false, dialects.Wrap(Name, "inspect", l.b.classify("get item", err))
	}
	if len(out.Item) == 0 {
		return item{}, false, nil
	}
	it, ok := l.layout.decode(out.Item)
	return it, ok, nil
}

// Handle implements dialects.LeaseLocker: token 0 (and always on the
// shedlock layout, which has none) skips the token comparison.
func (l *Locker) Handle(name, owner string, token int64, opts dialects.Options) (dialects.Lease, error) {
	if err := l.checkName(name); err != nil {
		return nil, err
	}
	opts, err := dialects.HandleOptions(name, owner, token, opts)
	if err != nil {
		return nil, err
	}
	s := l.newLease(name, opts, true, time.Now().Add(opts.AtMost))
	if l.layout.token != "" {
		s.token = token
	}
	return s, nil
}

// Expire implements dialects.LeaseLocker: one UpdateItem that moves a
// live lease's end to now, whoever holds it (the owner and token stay, so
// the next acquire's token is higher). It reports whether there was a
// live lease.
func (l *Locker) Expire(ctx context.Context, name string) (bool, error) {
	if err := l.checkName(name); err != nil {
		return false, err
	}
	if err := l.check(ctx); err != nil {
		return false, err
	}
	now := iso(time.Now())
	_, err := l.b.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(l.layout.table),
		Key:                       l.layout.keyOf(name),
		UpdateExpression:          aws.String("SET #u = :now"),
		ConditionExpression:       aws.String("#u > :now"),
		ExpressionAttributeNames:  map[string]string{"#u": l.layout.until},
		ExpressionAttributeValues: map[string]types.AttributeValue{":now": sv(now)},
	})
	var cf *types.ConditionalCheckFailedException
	if errors.As(err, &cf) {
		return false, nil
	}
	if err != nil {
		return false, dialects.Wrap(Name, "expire", l.b.classify("expire", err))
	}
	l.b.endLeases(l.layout.table, name, dialects.Wrap(Name, "lease", fmt.Errorf("%w: lock %q was force-released", dialects.ErrLeaseLost, name)))
	return true, nil
}
