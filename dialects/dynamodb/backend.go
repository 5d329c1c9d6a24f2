package dynamodb

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"

	"github.com/schedlock/schedlock/dialects"
)

// RetryAttempts is how many times the SDK sends a request that failed
// for a reason worth trying again (throttling, a 5xx, a dropped
// connection), counting the first: DynamoDB's default in the SDK. A
// conditional write that was refused is never sent again.
const RetryAttempts = 4

// Backend is an open DynamoDB client of one region (or endpoint). It
// implements dialects.Backend, LockLister, LockBreaker, Prober,
// RiskReporter and Pauser.
type Backend struct {
	dialects.LeasePauser // Pause and Resume: a lease on the lock's own item

	cfg    config
	client *dynamodb.Client
	info   dialects.Info
	facts  Facts

	// requests counts the HTTP requests sent, retries included.
	requests atomic.Int64

	// opened is the DSN's table as Open described it, nil when it was
	// not found or not described: the first check of that table takes it
	// instead of describing the table again (once: a later check, after a
	// drop or a lost item, describes it afresh).
	opened atomic.Pointer[types.TableDescription]

	leases dialects.LeaseSet[*lease] // live leases, ended by Close and Expire
	// transport is the HTTP client's, whose idle connections Close closes.
	transport *http.Transport
}

var (
	_ dialects.Backend      = (*Backend)(nil)
	_ dialects.LockLister   = (*Backend)(nil)
	_ dialects.LockBreaker  = (*Backend)(nil)
	_ dialects.Prober       = (*Backend)(nil)
	_ dialects.RiskReporter = (*Backend)(nil)
	_ dialects.Pauser       = (*Backend)(nil)
)

// Open builds the client conn names and detects the DSN's table (or the
// default one) with one DescribeTable, which also proves that the
// endpoint answers and accepts the credentials. An endpoint that does not
// answer, missing credentials and refused ones are a
// *dialects.UnreachableError; a missing table is not an error here (the
// lockers report it).
func Open(ctx context.Context, conn string) (*Backend, error) {
	cfg, err := parseConfig(conn)
	if err != nil {
		return nil, err
	}
	b := &Backend{cfg: cfg}
	b.LeasePauser = dialects.LeasePauser{Dialect: Name, Locker: b.LeaseLocker}
	// The SDK's buildable client (the configuration adds a CA bundle to
	// it, AWS_CA_BUNDLE), with the dial bounded too; once the configuration
	// is read its transport goes into a client whose idle connections
	// Close closes.
	httpClient := awshttp.NewBuildableClient().WithTimeout(cfg.timeout).
		WithDialerOptions(func(d *net.Dialer) { d.Timeout = cfg.timeout })
	opts := []func(*awsconfig.LoadOptions) error{
		awsconfig.WithRegion(cfg.region),
		awsconfig.WithHTTPClient(httpClient),
		awsconfig.WithAPIOptions([]func(*middleware.Stack) error{b.countRequests}),
		// The SDK's standard retries (four attempts, DynamoDB's default)
		// with at most a second between two: a refresh that meets
		// throttling is answered within seconds, not the SDK's 20 s.
		awsconfig.WithRetryer(func() aws.Retryer {
			return retry.AddWithMaxBackoffDelay(retry.NewStandard(func(o *retry.StandardOptions) { o.MaxAttempts = RetryAttempts }), time.Second)
		}),
	}
	if cfg.profile != "" {
		opts = append(opts, awsconfig.WithSharedConfigProfile(cfg.profile))
	}
	if cfg.keyID != "" {
		opts = append(opts, awsconfig.WithCredentialsProvider(credentials.NewStaticCredentialsProvider(cfg.keyID, cfg.secret, "")))
	}
	ac, err := awsconfig.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, dialects.Unreachable(fmt.Errorf("dynamodb %s: AWS configuration: %w", cfg.where(), err))
	}
	if bc, ok := ac.HTTPClient.(*awshttp.BuildableClient); ok {
		// Its transport as configured (CA bundle, dialer), in a client of
		// the backend's own that follows no redirect, as the SDK's does not.
		b.transport = bc.GetTransport()
		ac.HTTPClient = &http.Client{Transport: b.transport, Timeout: bc.GetTimeout(),
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	b.client = dynamodb.NewFromConfig(ac, func(o *dynamodb.Options) {
		if cfg.endpoint != "" {
			o.BaseEndpoint = aws.String(cfg.endpoint)
		}
	})
	dctx, cancel := context.WithTimeout(ctx, cfg.timeout)
	defer cancel()
	table := cfg.table
	if table == "" {
		table = dialects.PresetSchedlock
	}
	b.facts = Facts{Region: cfg.region, Endpoint: cfg.endpoint, Table: table}
	out, err := b.client.DescribeTable(dctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
	var missing *types.ResourceNotFoundException
	switch {
	case errors.As(err, &missing):
		b.facts.TableStatus = "missing"
	case isAccessDenied(err):
		b.facts.TableStatus = "unknown (DescribeTable refused)"
		b.facts.describeRefused = true
	case err != nil:
		return nil, b.classify("open", err)
	default:
		b.facts.fromTable(out.Table)
		b.opened.Store(out.Table)
	}
	b.info = b.facts.info()
	return b, nil
}

// countRequests adds the middleware that counts every request sent (each
// retry too), after the retry step.
func (b *Backend) countRequests(stack *middleware.Stack) error {
	return stack.Finalize.Add(middleware.FinalizeMiddlewareFunc("SchedlockRequestCount",
		func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
			b.requests.Add(1)
			return next.HandleFinalize(ctx, in)
		}), middleware.After)
}

// Requests is the number of HTTP requests the backend's client has sent
// so far, retries included: what a lock cycle costs in DynamoDB requests.
func (b *Backend) Requests() int64 { return b.requests.Load() }

// Client is the backend's SDK client, for tests and tools that need the
// raw API; the backend owns it.
func (b *Backend) Client() *dynamodb.Client { return b.client }

// Facts is what detection found.
func (b *Backend) Facts() Facts { return b.facts }

// Detected implements dialects.Backend.
func (b *Backend) Detected() dialects.Info { return b.info }

// Locker implements dialects.Backend: the table strategy only.
func (b *Backend) Locker(strategy dialects.Strategy, t dialects.Table) (dialects.Locker, error) {
	return dialects.LeaseOnlyLocker(Name, "DynamoDB has no session locks; its locks are leases (the table strategy)", strategy, t, b.LeaseLocker)
}

// LeaseLocker returns the locker on the table t names: Preset schedlock
// (default) or shedlock; Name the table, else the DSN's, else the
// preset's own ("schedlock", "Shedlock").
func (b *Backend) LeaseLocker(t dialects.Table) (dialects.LeaseLocker, error) {
	l, err := b.layoutOf(t)
	if err != nil {
		return nil, err
	}
	return &Locker{b: b, layout: l}, nil
}

// layoutOf resolves t to a layout and table.
func (b *Backend) layoutOf(t dialects.Table) (layout, error) {
	preset := t.Preset
	if preset == "" {
		preset = dialects.PresetSchedlock
	}
	if preset != dialects.PresetSchedlock && preset != dialects.PresetShedlock {
		return layout{}, dialects.Invalidf("the DynamoDB backend has the schedlock and shedlock layouts, not the %s preset", preset)
	}
	if t.TimeZone != "" && !strings.EqualFold(t.TimeZone, "UTC") {
		return layout{}, dialects.Invalidf("DynamoDB lock items keep instants in UTC (ISO-8601 with a Z): a writer time zone does not apply")
	}
	table := t.Name
	switch {
	case table == "" && b.cfg.table != "":
		table = b.cfg.table
	case table == "":
		table = defaultTable(preset)
	}
	if !tableRE.MatchString(table) {
		return layout{}, dialects.Invalidf("the DynamoDB table name %q must be 3 to 255 letters, digits, _, - and .", table)
	}
	return newLayout(preset, table), nil
}

// Recommend implements dialects.Backend.
func (b *Backend) Recommend() (dialects.Strategy, string) {
	return dialects.StrategyTable, "DynamoDB locks are items written by conditional updates (the table strategy); it has no session locks"
}

// Liquibase implements dialects.LockBreaker: DynamoDB has no Liquibase
// table.
func (b *Backend) Liquibase(string) (dialects.LiquibaseLock, error) {
	return nil, fmt.Errorf("%w: DynamoDB has no Liquibase lock table", dialects.ErrUnsupported)
}

// LockAdmin implements dialects.LockBreaker: nil, DynamoDB has no
// session locks.
func (b *Backend) LockAdmin() dialects.LockAdmin { return nil }

// Close implements dialects.Backend: live leases end and the client's
// idle HTTP connections close.
func (b *Backend) Close() error {
	if !b.leases.Close(func(l *lease) { _ = l.End(dialects.Wrap(Name, "lease", dialects.BackendClosed())) }) {
		return nil
	}
	if b.transport != nil {
		b.transport.CloseIdleConnections()
	}
	return nil
}

// track records a live lease, for Close and Expire to end. A lease that
// expired unreleased is not untracked by its timer: they are swept here
// once the set has grown past twice its size at the last sweep.
func (b *Backend) track(l *lease) bool {
	return b.leases.TrackSweeping(l, func(o *lease) bool {
		ended, _ := o.Ended()
		return ended
	})
}

// endLeases ends this process's leases of name in table with err.
func (b *Backend) endLeases(table, name string, err error) {
	for _, l := range b.leases.Matching(func(l *lease) bool { return l.locker.layout.table == table && l.name == name }) {
		_ = l.End(err)
	}
}

// classify turns an SDK error into the backend's: a service that cannot
// be reached or that refuses the credentials is unreachable (a waiting
// acquire rides it out), a refused action a missing privilege, and
// throttling is unreachable too (the request may be tried again).
func (b *Backend) classify(op string, err error) error {
	if err == nil {
		return nil
	}
	err = fmt.Errorf("dynamodb %s: %s: %w", b.cfg.where(), op, err)
	var ae smithy.APIError
	if errors.As(err, &ae) {
		switch ae.ErrorCode() {
		case "UnrecognizedClientException", "InvalidSignatureException", "IncompleteSignatureException",
			"MissingAuthenticationTokenException", "ExpiredTokenException", "InvalidClientTokenId":
			return dialects.Unreachable(fmt.Errorf("%w (%w: check the access key, its secret and the region)", err, errCredentials))
		case "AccessDeniedException":
			return &dialects.PrivilegeError{Privilege: "the DynamoDB actions on the lock table", Grant: iamGrant, Err: err}
		case "ProvisionedThroughputExceededException", "ThrottlingException", "RequestLimitExceeded",
			"InternalServerError", "ServiceUnavailable", "LimitExceededException":
			return dialects.Unreachable(err)
		}
		return err
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		var ne net.Error
		if !errors.As(err, &ne) {
			return err
		}
	}
	return dialects.Unreachable(err)
}

// iamGrant is the IAM policy statement a lock user needs.
const iamGrant = `allow dynamodb:GetItem, dynamodb:UpdateItem, dynamodb:Scan and dynamodb:DescribeTable on the lock table (dynamodb:CreateTable and dynamodb:DeleteTable to create and drop it)`

// isAccessDenied reports an action the credentials may not take.
func isAccessDenied(err error) bool {
	var ae smithy.APIError
	return errors.As(err, &ae) && ae.ErrorCode() == "AccessDeniedException"
}

// errCredentials marks credentials DynamoDB refused.
var errCredentials = errors.New("the credentials were refused")

// unavailable tells a store that is down for now (unreachable, throttled)
// from other failures; refused credentials are not tried again.
func unavailable(err error) bool {
	var u *dialects.UnreachableError
	return errors.As(err, &u) && !errors.Is(err, errCredentials)
}
