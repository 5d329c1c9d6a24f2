package redis

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/schedlock/schedlock/dialects"
)

// How a waiting acquire learns that the lock it waits for was released,
// without polling: it listens on two Pub/Sub channels of the lock's key.
//
//   - releasedChannel(key): the release scripts PUBLISH there when they
//     delete the key (within the script, so a release costs no extra
//     round trip; by PCALL, so an ACL user without the channel still
//     releases);
//   - the key's keyspace channel, __keyspace@DB__:KEY, where a server
//     with keyspace notifications on (notify-keyspace-events with K and
//     g or x, e.g. "Kgx") reports "del" and "expired": so a release by
//     another program (a ShedLock node) and a lease that runs out wake
//     the waiter too. Without them nothing comes there.
//
// One Pub/Sub connection per backend carries every channel its waiting
// acquires listen on, opened with the first wait; a channel is
// subscribed while an acquire waits on it. A wake-up lost to a cut
// connection, or a Redis Cluster node other than the key's (keyspace
// events stay on the key's node; PUBLISH reaches every node), is covered
// by the poll every Options.RetryEvery and at the refused lease's end
// (dialects.RetryAcquireWoken).

// releasedChannel is the channel the release scripts publish on when
// they delete key.
func releasedChannel(key string) string { return key + releasedSuffix }

// releasedSuffix ends the released channel of a key (luaPublish).
const releasedSuffix = ":released"

// keyspaceChannel is the keyspace-notification channel of key in
// database db.
func keyspaceChannel(db int, key string) string {
	return "__keyspace@" + strconv.Itoa(db) + "__:" + key
}

// freeingEvents are the keyspace events after which a lock key is gone.
var freeingEvents = map[string]bool{"del": true, "expired": true, "evicted": true}

// confirmWait bounds how long a waiter waits for the server to confirm
// its subscription before it goes on (and then relies on the poll for a
// release that comes before the subscription).
const confirmWait = 2 * time.Second

// pingEvery is how often an idle Pub/Sub connection is pinged, so that a
// connection cut without a word is noticed (go-redis then reconnects and
// subscribes again).
const pingEvery = 30 * time.Second

// waker is a backend's Pub/Sub connection and who listens on it.
type waker struct {
	client goredis.UniversalClient
	db     int

	mu       sync.Mutex
	ps       *goredis.PubSub // nil until the first wait
	closed   bool
	refused  error // the server refused a subscription (ACL): poll only
	channels map[string]*listeners
}

// listeners are the waiting acquires of one channel.
type listeners struct {
	woken     map[chan struct{}]bool
	confirmed bool
	ready     chan struct{} // closed once the server confirmed the subscription
}

func newWaker(c goredis.UniversalClient, db int) *waker {
	return &waker{client: c, db: db, channels: map[string]*listeners{}}
}

// watch starts listening for the release of key; it returns once the
// server confirmed the subscriptions (or after confirmWait). An error
// leaves the waiter to the poll.
func (w *waker) watch(ctx context.Context, key string) (dialects.Wakeup, error) {
	channels := []string{releasedChannel(key), keyspaceChannel(w.db, key)}
	me := make(chan struct{}, 1)
	w.mu.Lock()
	if w.closed || w.refused != nil {
		err := w.refused
		w.mu.Unlock()
		if err == nil {
			err = errClosed
		}
		return dialects.Wakeup{}, err
	}
	var fresh []string
	var ready []chan struct{}
	for _, ch := range channels {
		l := w.channels[ch]
		if l == nil {
			l = &listeners{woken: map[chan struct{}]bool{}, ready: make(chan struct{})}
			w.channels[ch] = l
			fresh = append(fresh, ch)
		}
		l.woken[me] = true
		ready = append(ready, l.ready)
	}
	start := w.ps == nil
	if start {
		w.ps = w.client.Subscribe(ctx)
	}
	var err error
	if len(fresh) > 0 {
		// Under the lock, so that no stop unsubscribes a channel after
		// this subscribed it again.
		err = w.ps.Subscribe(ctx, fresh...)
	}
	if start && err == nil {
		go w.receive(w.ps)
	}
	w.mu.Unlock()
	stop := func() { w.stop(channels, me) }
	if err != nil {
		stop()
		return dialects.Wakeup{}, err
	}
	t := time.NewTimer(confirmWait)
	defer t.Stop()
	for _, r := range ready {
		select {
		case <-r:
		case <-t.C:
		case <-ctx.Done():
			stop()
			return dialects.Wakeup{}, ctx.Err()
		}
	}
	w.mu.Lock()
	err = w.refused
	w.mu.Unlock()
	if err != nil {
		stop()
		return dialects.Wakeup{}, err
	}
	return dialects.Wakeup{Woken: me, Stop: stop}, nil
}

// stop ends the listening of me on channels, unsubscribing those nobody
// else listens on.
func (w *waker) stop(channels []string, me chan struct{}) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var gone []string
	for _, ch := range channels {
		l := w.channels[ch]
		if l == nil {
			continue
		}
		delete(l.woken, me)
		if len(l.woken) == 0 {
			delete(w.channels, ch)
			gone = append(gone, ch)
		}
	}
	if len(gone) > 0 && w.ps != nil && !w.closed {
		ctx, cancel := context.WithTimeout(context.Background(), confirmWait)
		defer cancel()
		_ = w.ps.Unsubscribe(ctx, gone...)
	}
}

// receive reads ps until the waker closes: confirmations, releases,
// keyspace events; a ping when it has been quiet for pingEvery.
func (w *waker) receive(ps *goredis.PubSub) {
	ctx := context.Background()
	for {
		msg, err := ps.ReceiveTimeout(ctx, pingEvery)
		w.mu.Lock()
		closed := w.closed
		w.mu.Unlock()
		if closed {
			return
		}
		switch m := msg.(type) {
		case *goredis.Subscription:
			if m.Kind == "subscribe" {
				w.confirm(m.Channel)
			}
		case *goredis.Message:
			if !strings.HasPrefix(m.Channel, "__keyspace@") || freeingEvents[m.Payload] {
				w.wake(m.Channel)
			}
		}
		switch {
		case err == nil:
		case isTimeout(err):
			_ = ps.Ping(ctx)
		case isNoPermission(err):
			w.refuse(err)
		default:
			// go-redis reconnects and subscribes again on the next read.
			time.Sleep(100 * time.Millisecond)
		}
	}
}

// confirm marks ch subscribed.
func (w *waker) confirm(ch string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if l := w.channels[ch]; l != nil && !l.confirmed {
		l.confirmed = true
		close(l.ready)
	}
}

// wake tells every listener of ch, keeping one wake-up each while it is
// busy with a try.
func (w *waker) wake(ch string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if l := w.channels[ch]; l != nil {
		for me := range l.woken {
			select {
			case me <- struct{}{}:
			default:
			}
		}
	}
}

// refuse records that the server refused a subscription: the waiting
// acquires go on polling.
func (w *waker) refuse(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.refused == nil {
		w.refused = errors.Join(errors.New("the Redis user may not subscribe to the lock's channels (ACL channel permissions): waiting polls"), err)
	}
	for _, l := range w.channels {
		if !l.confirmed {
			l.confirmed = true
			close(l.ready)
		}
	}
}

// close closes the Pub/Sub connection, if any.
func (w *waker) close() {
	w.mu.Lock()
	w.closed = true
	ps := w.ps
	w.mu.Unlock()
	if ps != nil {
		_ = ps.Close()
	}
}
