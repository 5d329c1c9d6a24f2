package nats

import (
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/schedlock/schedlock/dialects"
)

// streamOf is the JetStream stream behind the KV bucket.
func streamOf(bucket string) string { return "KV_" + bucket }

// bucketFacts are the settings of a bucket that matter to its locks.
type bucketFacts struct {
	name     string
	history  int64
	ttl      time.Duration
	memory   bool // memory storage: a restart forgets it
	replicas int
}

func factsOf(bucket string, info *jetstream.StreamInfo) bucketFacts {
	return bucketFacts{name: bucket, history: info.Config.MaxMsgsPerSubject, ttl: info.Config.MaxAge,
		memory: info.Config.Storage == jetstream.MemoryStorage, replicas: info.Config.Replicas}
}

// checkBucket refuses, in one line (ErrInvalid), a bucket whose settings
// would free a held lock: entries that expire (a TTL, the stream's max
// age), or limits under which the stream discards its oldest messages
// (an old lock key dropped to make room). Not a KV bucket (a stream of
// that name without the KV subjects) is refused too.
func checkBucket(bucket string, info *jetstream.StreamInfo) error {
	c := info.Config
	switch {
	case c.MaxAge != 0:
		return dialects.Invalidf("the NATS bucket %s expires its entries after %s (its TTL), which would free held locks: use a bucket without a TTL (history 1, no max age)", bucket, c.MaxAge)
	case c.Discard == jetstream.DiscardOld && (c.MaxMsgs > 0 || c.MaxBytes > 0):
		return dialects.Invalidf("the NATS bucket %s drops its oldest entries when full (discard old with max msgs %d, max bytes %d), which would free held locks: use a KV bucket (discard new) or no limit", bucket, c.MaxMsgs, c.MaxBytes)
	case c.MaxMsgsPerSubject < 1:
		return dialects.Invalidf("the NATS stream %s keeps every value of every key (no per-key history limit): it is not a KV bucket; create a KV bucket with history 1", streamOf(bucket))
	}
	return nil
}
