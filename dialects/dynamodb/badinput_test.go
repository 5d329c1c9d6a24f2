package dynamodb_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	sdk "github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/schedlock/schedlock/checks"
	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/dynamodb"
	"github.com/schedlock/schedlock/internal/testnet"
)

// oneLine fails t unless err is one line.
func oneLine(t *testing.T, what string, err error) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no error", what)
	}
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("%s: the error spans lines: %q", what, err)
	}
}

// An endpoint nothing listens on is unreachable, in one line naming it.
func TestUnreachableEndpoint(t *testing.T) {
	port := testnet.FreePort(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := dynamodb.Open(ctx, fmt.Sprintf("dynamodb://AKID:secret-key@us-east-1/locks?endpoint=http://127.0.0.1:%d&dial-timeout=1s", port))
	oneLine(t, "open", err)
	var u *dialects.UnreachableError
	if !errors.As(err, &u) || !strings.Contains(err.Error(), fmt.Sprintf("127.0.0.1:%d", port)) || strings.Contains(err.Error(), "secret-key") {
		t.Fatalf("open of a closed port: %v; want an unreachable error naming the endpoint, without the secret", err)
	}
}

// Refused credentials, answered as DynamoDB answers a key it does not
// know (dynalite checks that requests are signed, not by whom, so this
// is an HTTP server of the test's own that answers as DynamoDB does),
// are an unreachable error that names the credentials. A waiting acquire
// does not try them again: they will not be accepted later.
func TestRefusedCredentials(t *testing.T) {
	t.Run("acquire", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/x-amz-json-1.0")
			if strings.HasSuffix(r.Header.Get("X-Amz-Target"), ".DescribeTable") {
				_, _ = w.Write([]byte(`{"Table":{"TableName":"locks","TableStatus":"ACTIVE","KeySchema":[{"AttributeName":"name","KeyType":"HASH"}],"AttributeDefinitions":[{"AttributeName":"name","AttributeType":"S"}]}}`))
				return
			}
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"__type":"com.amazon.coral.service#UnrecognizedClientException","message":"The security token included in the request is invalid."}`))
		}))
		defer srv.Close()
		b := open(t, "dynamodb://AKIDWRONG:wrong-secret@us-east-1/locks?endpoint="+srv.URL)
		l, err := b.LeaseLocker(dialects.Table{})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, _, err := l.Inspect(ctx, "warm-up"); err == nil {
			t.Fatal("inspect with refused credentials succeeded")
		}
		before := b.Requests()
		_, err = l.Acquire(ctx, "job", dialects.Options{AtMost: time.Minute, Wait: 20 * time.Second, RetryEvery: 10 * time.Millisecond})
		oneLine(t, "acquire", err)
		if !strings.Contains(err.Error(), "credentials were refused") {
			t.Errorf("acquire: %v; want the refused credentials", err)
		}
		if n := b.Requests() - before; n != 1 {
			t.Errorf("a waiting acquire sent %d requests with refused credentials, want 1 (no retry)", n)
		}
	})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		w.Header().Set("x-amzn-RequestId", "TEST")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"__type":"com.amazon.coral.service#UnrecognizedClientException","message":"The security token included in the request is invalid."}`))
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := dynamodb.Open(ctx, "dynamodb://AKIDWRONG:wrong-secret@us-east-1/locks?endpoint="+srv.URL)
	oneLine(t, "open", err)
	var u *dialects.UnreachableError
	if !errors.As(err, &u) || !strings.Contains(err.Error(), "credentials were refused") || strings.Contains(err.Error(), "wrong-secret") {
		t.Fatalf("open with refused credentials: %v; want an unreachable error about the credentials", err)
	}
}

// A table whose key is not the layout's is refused in one line naming
// the key it needs, and nothing is written to it.
func TestTableWithOtherKeyRefused(t *testing.T) {
	b := openLive(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	table := checks.NewPrefix() + "_otherkey"
	_, err := b.Client().CreateTable(ctx, &sdk.CreateTableInput{
		TableName: aws.String(table),
		KeySchema: []types.KeySchemaElement{{AttributeName: aws.String("id"), KeyType: types.KeyTypeHash}, {AttributeName: aws.String("at"), KeyType: types.KeyTypeRange}},
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("id"), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String("at"), AttributeType: types.ScalarAttributeTypeN}},
		BillingMode: types.BillingModePayPerRequest,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = b.Client().DeleteTable(context.Background(), &sdk.DeleteTableInput{TableName: aws.String(table)})
	})
	waitActive(t, b, table)
	for _, preset := range []string{dialects.PresetSchedlock, dialects.PresetShedlock} {
		l, err := b.LeaseLocker(dialects.Table{Preset: preset, Name: table})
		if err != nil {
			t.Fatal(err)
		}
		_, err = l.Acquire(ctx, "job", dialects.Options{AtMost: time.Minute})
		oneLine(t, preset, err)
		want := map[string]string{dialects.PresetSchedlock: "name (S, HASH)", dialects.PresetShedlock: "_id (S, HASH)"}[preset]
		if !errors.Is(err, dialects.ErrInvalid) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "id (S, HASH), at (N, RANGE)") {
			t.Errorf("%s: acquire on a table keyed id+at: %v; want ErrInvalid naming its key and %s", preset, err, want)
		}
		if err := l.(dialects.TableCreator).CreateTable(ctx); !errors.Is(err, dialects.ErrInvalid) {
			t.Errorf("%s: create table over it: %v; want the same refusal", preset, err)
		}
	}
	out, err := b.Client().Scan(ctx, &sdk.ScanInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	if out.Count != 0 {
		t.Fatalf("the refused acquires wrote %d items", out.Count)
	}
}

// waitActive waits until table is active.
func waitActive(t *testing.T, b *dynamodb.Backend, table string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		d, err := b.Client().DescribeTable(context.Background(), &sdk.DescribeTableInput{TableName: aws.String(table)})
		if err == nil && d.Table.TableStatus == types.TableStatusActive {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("table %s is not active: %v", table, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// nativeTable creates a native-layout table of the test's own, dropped at
// its end, and returns its locker.
func nativeTable(t testing.TB, b *dynamodb.Backend, suffix string) dialects.LeaseLocker {
	t.Helper()
	l, err := b.LeaseLocker(dialects.Table{Name: checks.NewPrefix() + suffix})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := l.(dialects.TableCreator).CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.(dialects.TableDropper).DropTable(context.Background()) })
	return l
}

// Names are data: the characters of DynamoDB's expression syntax (#, :,
// ., quotes, brackets) and its reserved words are locks like any other,
// each its own item under its exact name; a name longer than a key may
// be (2048 bytes) is refused with the limit, and writes nothing.
func TestSpecialNames(t *testing.T) {
	b := openLive(t)
	l := nativeTable(t, b, "_names")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	names := []string{"#u", ":now", "a.b[0]", "name", "TOKEN", `"quoted" 'x'`, "attribute_not_exists(lock_until)", "日本語 ✓", strings.Repeat("é", 1024)}
	for _, name := range names {
		lease, err := l.Acquire(ctx, name, dialects.Options{AtMost: time.Minute, Owner: "names"})
		if err != nil {
			t.Fatalf("%q: %v", name, err)
		}
		row, found, err := l.Inspect(ctx, name)
		if err != nil || !found || row.Name != name || row.Owner != "names" {
			t.Fatalf("%q: inspect %+v, %v, %v", name, row, found, err)
		}
		if err := lease.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	long := strings.Repeat("x", dynamodb.MaxNameBytes+1)
	_, err := l.Acquire(ctx, long, dialects.Options{AtMost: time.Minute})
	oneLine(t, "long name", err)
	var tooLong *dialects.NameTooLongError
	if !errors.As(err, &tooLong) || !strings.Contains(err.Error(), "2048") {
		t.Fatalf("a %d-byte name: %v; want a *NameTooLongError naming 2048", len(long), err)
	}
	listing, err := b.ListLocks(ctx, dialects.ListOptions{Tables: []dialects.Table{{Name: l.Schema().Table}}, All: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(listing.Locks) != len(names) {
		t.Fatalf("listed %d locks, want the %d names (and nothing of the refused one)", len(listing.Locks), len(names))
	}
}

// Throttling (ProvisionedThroughputExceededException, which dynalite
// never answers, so a server of the test's own answers as DynamoDB does)
// is retried by the SDK and then ridden out by a waiting acquire: it gets
// the lock once the table takes writes again. A single try reports the
// store unavailable, in one line.
func TestThrottlingRiddenOut(t *testing.T) {
	// Throttled writes for the single try's attempts (the SDK's retries),
	// then for a whole try of the waiting acquire, which it rides out.
	var mu sync.Mutex
	throttle := 2 * dynamodb.RetryAttempts
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		switch {
		case strings.HasSuffix(r.Header.Get("X-Amz-Target"), ".DescribeTable"):
			_, _ = w.Write([]byte(`{"Table":{"TableName":"locks","TableStatus":"ACTIVE","KeySchema":[{"AttributeName":"name","KeyType":"HASH"}],"AttributeDefinitions":[{"AttributeName":"name","AttributeType":"S"}]}}`))
			return
		case strings.HasSuffix(r.Header.Get("X-Amz-Target"), ".UpdateItem"):
			mu.Lock()
			throttled := throttle > 0
			throttle--
			mu.Unlock()
			if throttled {
				w.WriteHeader(http.StatusBadRequest)
				_, _ = w.Write([]byte(`{"__type":"com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException","message":"The level of configured provisioned throughput for the table was exceeded."}`))
				return
			}
			_, _ = w.Write([]byte(`{"Attributes":{"token":{"N":"7"}}}`))
			return
		}
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"__type":"com.amazon.coral.validate#ValidationException","message":"not served here"}`))
	}))
	defer srv.Close()
	b := open(t, "dynamodb://AKID:secret@us-east-1/locks?endpoint="+srv.URL)
	l, err := b.LeaseLocker(dialects.Table{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err = l.Acquire(ctx, "job", dialects.Options{AtMost: time.Minute})
	oneLine(t, "a single try", err)
	var u *dialects.UnreachableError
	if !errors.As(err, &u) || !strings.Contains(err.Error(), "ProvisionedThroughputExceeded") {
		t.Fatalf("a single try while throttled: %v; want the store unavailable, naming the throttling", err)
	}
	before := b.Requests()
	lease, err := l.Acquire(ctx, "job", dialects.Options{AtMost: time.Minute, Wait: 45 * time.Second, RetryEvery: 20 * time.Millisecond})
	if err != nil {
		t.Fatalf("a waiting acquire did not ride out the throttling: %v", err)
	}
	if n := b.Requests() - before; n != dynamodb.RetryAttempts+1 {
		t.Errorf("the waiting acquire sent %d requests, want %d: a try of %d throttled attempts, then the one that took the lock", n, dynamodb.RetryAttempts+1, dynamodb.RetryAttempts)
	}
	if tok, ok := lease.Token(); !ok || tok != 7 {
		t.Errorf("token %d, %v; want the 7 the table answered", tok, ok)
	}
}
