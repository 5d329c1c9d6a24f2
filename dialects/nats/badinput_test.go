package nats_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/nats"
	"github.com/schedlock/schedlock/internal/testnet"
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

// A stream with the bucket's name that would drop or keep lock values
// against the lock contract is refused in one line, nothing written: one
// that discards its oldest messages when full (an old lock key dropped),
// and one without a per-key history limit (not a KV bucket).
func TestBucketSettingsRefused(t *testing.T) {
	dsn := embedded(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	nc, err := natsgo.Connect(strings.TrimSuffix(dsn, "/schedlock"))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	for _, c := range []struct {
		bucket string
		cfg    jetstream.StreamConfig
		want   string
	}{
		{"evicting", jetstream.StreamConfig{MaxMsgsPerSubject: 1, MaxMsgs: 100, Discard: jetstream.DiscardOld}, "oldest"},
		{"unbounded", jetstream.StreamConfig{MaxMsgsPerSubject: -1}, "history"},
	} {
		c.cfg.Name, c.cfg.Subjects = "KV_"+c.bucket, []string{"$KV." + c.bucket + ".>"}
		if _, err := js.CreateStream(ctx, c.cfg); err != nil {
			t.Fatal(err)
		}
		b := open(t, dsn)
		for _, preset := range []string{dialects.PresetSchedlock, dialects.PresetShedlock} {
			l, err := b.LeaseLocker(dialects.Table{Preset: preset, Name: c.bucket})
			if err != nil {
				t.Fatal(err)
			}
			_, err = l.Acquire(ctx, "job", dialects.Options{AtMost: time.Minute})
			if !errors.Is(err, dialects.ErrInvalid) || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s, %s: got %v, want one line matching ErrInvalid that says %q", c.bucket, preset, err, c.want)
			}
		}
		if s, _ := js.Stream(ctx, "KV_"+c.bucket); s == nil || s.CachedInfo().State.Msgs != 0 {
			t.Errorf("%s: a refused acquire wrote", c.bucket)
		}
	}
}

// An unreachable server and a refused login are one line each, matching
// *dialects.UnreachableError, and the password is not in it.
func TestUnreachableAndRefusedLogin(t *testing.T) {
	s := embeddedServer(t, &server.Options{JetStream: true, StoreDir: t.TempDir(), Username: "locks", Password: "right-secret"})
	free := testnet.FreeAddr(t)
	for _, dsn := range []string{
		"nats://locks:wrong-secret@" + s.Addr().String() + "/schedlock",
		"nats://" + free + "/schedlock?dial-timeout=1s",
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := nats.Open(ctx, dsn)
		cancel()
		var u *dialects.UnreachableError
		if !errors.As(err, &u) || strings.Contains(err.Error(), "\n") || strings.Contains(err.Error(), "wrong-secret") {
			t.Errorf("open %s: %v, want one line matching *UnreachableError, without the password", strings.Replace(dsn, "wrong-secret", "***", 1), err)
		}
	}
	b := open(t, "nats://locks:right-secret@"+s.Addr().String()+"/schedlock")
	if b.Detected().Version == "" {
		t.Error("no server version detected")
	}
}

// A server without JetStream is refused in one line that says how to
// enable it, on Open's one request.
func TestServerWithoutJetStream(t *testing.T) {
	s := embeddedServer(t, &server.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := nats.Open(ctx, "nats://"+s.Addr().String()+"/schedlock")
	if !errors.Is(err, dialects.ErrInvalid) || !strings.Contains(err.Error(), "JetStream is not enabled") {
		t.Errorf("open a server without JetStream: %v, want an Invalid error saying JetStream is not enabled", err)
	}
}
