package nats

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/schedlock/schedlock/dialects"
)

// The risks of a NATS deployment that are not among the two-holder ones
// (dialects.TwoHolderRiskIDs).
const (
	// RiskNoPerKeyTTL: a server before 2.11 has no per-key TTL: a dead
	// holder's key stays until a contender finds its lease over.
	RiskNoPerKeyTTL = "no-per-key-ttl"
	// RiskSingleReplica: a bucket with one replica on a cluster lives on
	// one server: while it is down no lock can be taken or kept.
	RiskSingleReplica = "single-replica"
	// RiskHistory: a bucket that keeps more than one value per key keeps
	// every refresh of every lock up to its history.
	RiskHistory = "history"
)

// DefaultSyncInterval is JetStream's fsync interval when the server
// configures none (the file store's defaultSyncInterval).
const DefaultSyncInterval = 2 * time.Minute

// facts are what detection found: from the server's INFO at connect and
// the buckets read since. The server's fsync setting (jetstream
// sync_interval) is not among them: only its varz shows it, which answers
// users of the system account alone, and that account has no JetStream,
// so no connection that can lock can read it.
type facts struct {
	version string
	cluster string // the server's cluster name; "" when it is alone

	buckets map[string]bucketFacts // guarded by Backend.mu
}

// readBucket reads the bucket's stream info (one request) and records
// it; found is false when there is no such bucket.
func (b *Backend) readBucket(ctx context.Context, bucket string) (*jetstream.StreamInfo, bool, error) {
	s, found, err := b.bucketStream(ctx, bucket)
	if err != nil || !found {
		return nil, found, err
	}
	return s.CachedInfo(), true, nil
}

// bucketStream reads the bucket's stream (one request) and records its
// settings and the handle, which the first locker of the bucket takes
// instead of reading it again.
func (b *Backend) bucketStream(ctx context.Context, bucket string) (jetstream.Stream, bool, error) {
	s, err := b.js.Stream(ctx, streamOf(bucket))
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, dialects.Unreachable(fmt.Errorf("bucket %s: %w", bucket, err))
	}
	b.mu.Lock()
	b.facts.buckets[bucket] = factsOf(bucket, s.CachedInfo())
	b.opened[bucket] = s
	b.mu.Unlock()
	return s, true, nil
}

// takeStream returns the handle of bucket that Open read, once.
func (b *Backend) takeStream(bucket string) jetstream.Stream {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.opened[bucket]
	delete(b.opened, bucket)
	return s
}

// perKeyTTL reports whether the server version has per-key TTLs (2.11).
func perKeyTTL(version string) bool {
	parts := strings.SplitN(strings.TrimPrefix(version, "v"), ".", 3)
	if len(parts) < 2 {
		return false
	}
	major, _ := strconv.Atoi(parts[0])
	minor, _ := strconv.Atoi(parts[1])
	return major > 2 || major == 2 && minor >= 11
}

// Risks implements dialects.RiskReporter: what detection found, as Probe
// reports it, without a round trip (never nil). A bucket of memory
// storage forgets its locks on a restart; a file bucket's writes are
// acknowledged before they reach disk unless the servers sync every
// write (async-fsync: the server's default, and reported always, since
// no client that can lock can read the setting); neither is reported for a bucket not read
// yet but for the DSN's, read when the backend opened.
func (b *Backend) Risks() []dialects.Risk {
	b.mu.Lock()
	defer b.mu.Unlock()
	f := b.facts
	out := []dialects.Risk{}
	names := make([]string, 0, len(f.buckets))
	for n := range f.buckets {
		names = append(names, n)
	}
	sortStrings(names)
	var memory, file []string
	for _, n := range names {
		bf := f.buckets[n]
		if bf.memory {
			memory = append(memory, n)
		} else {
			file = append(file, n)
		}
	}
	if len(memory) > 0 {
		out = append(out, dialects.Risk{ID: dialects.RiskNoPersistence,
			Detail: fmt.Sprintf("bucket %s keeps its keys in memory (ShedLock's provider creates its bucket so): a server restart forgets every lock, and a second holder can take one whose holder still runs until its next refresh", strings.Join(memory, ", ")),
			Remedy: "recreate the bucket with file storage (a KV bucket of history 1 on file storage) before the nodes start"})
	}
	if len(file) > 0 || len(names) == 0 {
		out = append(out, dialects.Risk{ID: dialects.RiskAsyncFsync,
			Detail: fmt.Sprintf("JetStream acknowledges writes before they reach disk unless its servers set sync_interval: always (the default syncs every %s; a client cannot read the setting: only the system account's varz shows it): a server machine lost (power, kernel) within that interval loses the locks taken meanwhile, and a second holder can take them", DefaultSyncInterval),
			Remedy: "set jetstream { sync_interval: always } on every server (each write then waits for its fsync) and accept this risk by name; replicas alone do not help when the machines fail together"})
	}
	if !perKeyTTL(f.version) {
		out = append(out, dialects.Risk{ID: RiskNoPerKeyTTL,
			Detail: fmt.Sprintf("nats-server %s has no per-key TTL (2.11 and later): schedlock judges leases by the value, so locks stay correct, but a dead holder's key stays in the bucket until a contender finds its lease over (a per-key TTL given to such a server is silently ignored)", f.version),
			Remedy: "nothing for correctness; upgrade to 2.11 or later for keys that vanish by themselves"})
	}
	for _, n := range names {
		bf := f.buckets[n]
		if f.cluster != "" && bf.replicas <= 1 {
			out = append(out, dialects.Risk{ID: RiskSingleReplica,
				Detail: fmt.Sprintf("bucket %s has 1 replica on cluster %s: it lives on one server, and while that server is down no lock in it can be taken, refreshed or released", n, f.cluster),
				Remedy: "give bucket " + n + " 3 replicas (edit its stream)"})
		}
		if bf.history > 1 {
			out = append(out, dialects.Risk{ID: RiskHistory,
				Detail: fmt.Sprintf("bucket %s keeps %d values per key: every refresh of every lock is kept up to that many (storage, and past holders readable by anyone who may read the bucket); locks stay correct", n, bf.history),
				Remedy: "use a bucket with history 1 for locks"})
		}
	}
	return out
}
