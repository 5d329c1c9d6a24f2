package nats_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/schedlock/schedlock/dialects"
)

// TestBucketWithTTLRefused checks that a bucket whose entries expire is
// refused in one line, and that a missing bucket is a missing table.
func TestBucketWithTTLRefused(t *testing.T) {
	dsn := embedded(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	nc, err := natsgo.Connect(strings.TrimSuffix(dsn, "/schedlock"))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	if _, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "expiring", TTL: time.Minute}); err != nil {
		t.Fatal(err)
	}
	b := open(t, dsn)
	l, err := b.LeaseLocker(dialects.Table{Name: "expiring"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = l.Acquire(ctx, "job", dialects.Options{AtMost: time.Minute})
	if !errors.Is(err, dialects.ErrInvalid) || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "TTL") {
		t.Fatalf("acquire on a bucket with a TTL: got %v, want one line matching ErrInvalid that names the TTL", err)
	}
	if n, _ := js.KeyValue(ctx, "expiring"); n != nil {
		if st, _ := n.Status(ctx); st != nil && st.Values() != 0 {
			t.Fatalf("the refused acquire wrote %d values", st.Values())
		}
	}
	l2, _ := b.LeaseLocker(dialects.Table{Name: "absent"})
	_, err = l2.Acquire(ctx, "job", dialects.Options{AtMost: time.Minute})
	var missing *dialects.MissingTableError
	if !errors.As(err, &missing) {
		t.Fatalf("acquire on a missing bucket: got %v, want a *MissingTableError", err)
	}
}
