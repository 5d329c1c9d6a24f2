package etcd

import (
	"context"
	"errors"
	"fmt"
	"sync"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc"
)

// renewer sends one-off lease keep-alives (a refresh, a spare's renewal)
// on one LeaseKeepAlive stream of the backend's, opened at the first
// keep-alive and again after it breaks.
//
// The client's KeepAliveOnce opens a stream per call, and the client
// authenticates every stream it opens: with authentication enabled that
// is one Authenticate per keep-alive, a bcrypt password check that costs
// the server tens of milliseconds of CPU each, so that a busy process
// (or a few) starve the server of it and every request waits behind
// them. One stream authenticates once, when it opens.
//
// A stream answers its requests in the order it got them, and a request
// carries only the lease's ID: the answers to one lease are handed to
// its callers in the order they sent.
type renewer struct {
	cli *clientv3.Client
	bg  context.Context // ends at Close: so does the stream

	mu     sync.Mutex
	stream *kaStream // nil: none open
}

// kaStream is one open LeaseKeepAlive stream.
type kaStream struct {
	s      pb.Lease_LeaseKeepAliveClient
	cancel context.CancelFunc

	sendMu sync.Mutex // one Send at a time

	mu      sync.Mutex
	waiting map[clientv3.LeaseID][]chan kaResult // guarded by mu
	err     error                                // guarded by mu: why it broke; nil while open
}

// kaResult is the answer to one keep-alive.
type kaResult struct {
	ttl int64
	err error
}

// errStreamBroke marks a keep-alive whose stream broke before it was
// answered: it may or may not have renewed the lease.
var errStreamBroke = errors.New("the lease keep-alive stream broke")

// keepAliveOnce renews lease id once and returns the TTL the server
// granted, or rpctypes.ErrLeaseNotFound when the lease has expired or
// was revoked. A stream that broke under it is replaced and the
// keep-alive sent once more (renewing twice is harmless: the caller
// counts the TTL from before the first was sent).
func (r *renewer) keepAliveOnce(ctx context.Context, id clientv3.LeaseID) (int64, error) {
	var last error
	for range 2 {
		st, err := r.current(ctx)
		if err != nil {
			return 0, err
		}
		ch, err := st.send(id)
		if err != nil {
			r.drop(st)
			last = err
			continue
		}
		select {
		case res := <-ch:
			if errors.Is(res.err, errStreamBroke) {
				r.drop(st)
				last = res.err
				continue
			}
			return res.ttl, res.err
		case <-ctx.Done():
			return 0, ctx.Err() // the answer, when it comes, goes to ch's buffer
		}
	}
	return 0, last
}

// current returns the open stream, opening one when there is none. The
// opening is bounded by ctx; the stream then lives until it breaks or
// the backend closes.
func (r *renewer) current(ctx context.Context) (*kaStream, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stream != nil {
		return r.stream, nil
	}
	sctx, cancel := context.WithCancel(r.bg)
	stop := context.AfterFunc(ctx, cancel) // a caller that gives up ends the opening
	s, err := pb.NewLeaseClient(r.cli.ActiveConnection()).LeaseKeepAlive(sctx, grpc.WaitForReady(true))
	if !stop() || err != nil {
		cancel()
		if err == nil || ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("open a lease keep-alive stream: %w", rpctypes.Error(err))
	}
	st := &kaStream{s: s, cancel: cancel, waiting: map[clientv3.LeaseID][]chan kaResult{}}
	r.stream = st
	go st.receive()
	return st, nil
}

// drop forgets st, if it is still the current stream, and ends it.
func (r *renewer) drop(st *kaStream) {
	r.mu.Lock()
	if r.stream == st {
		r.stream = nil
	}
	r.mu.Unlock()
	st.cancel()
}

// send queues a waiter for lease id and sends its keep-alive. The
// waiter is queued before the request goes out, so the n-th answer to a
// lease is to a request sent after its n-th waiter took its start time.
func (st *kaStream) send(id clientv3.LeaseID) (<-chan kaResult, error) {
	ch := make(chan kaResult, 1)
	st.mu.Lock()
	if st.err != nil {
		st.mu.Unlock()
		return nil, st.err
	}
	st.waiting[id] = append(st.waiting[id], ch)
	st.mu.Unlock()
	st.sendMu.Lock()
	err := st.s.Send(&pb.LeaseKeepAliveRequest{ID: int64(id)})
	st.sendMu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errStreamBroke, rpctypes.Error(err))
	}
	return ch, nil
}

// receive hands each answer to the oldest waiter of its lease, until the
// stream breaks; then every waiter is told.
func (st *kaStream) receive() {
	for {
		resp, err := st.s.Recv()
		if err != nil {
			st.mu.Lock()
			st.err = fmt.Errorf("%w: %w", errStreamBroke, rpctypes.Error(err))
			for _, chs := range st.waiting {
				for _, ch := range chs {
					ch <- kaResult{err: st.err}
				}
			}
			st.waiting = nil
			st.mu.Unlock()
			st.cancel()
			return
		}
		id := clientv3.LeaseID(resp.ID)
		res := kaResult{ttl: resp.TTL}
		if resp.TTL <= 0 {
			res.err = rpctypes.ErrLeaseNotFound
		}
		st.mu.Lock()
		if chs := st.waiting[id]; len(chs) > 0 {
			chs[0] <- res
			if len(chs) == 1 {
				delete(st.waiting, id)
			} else {
				st.waiting[id] = chs[1:]
			}
		}
		st.mu.Unlock()
	}
}
