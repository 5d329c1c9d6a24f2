package zookeeper

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/schedlock/schedlock/dialects"
)

// lease is one held lock node, or a Handle on someone's (which finds its
// node when it is used and is never told of a loss).
type lease struct {
	locker          *Locker
	name, owner     string
	path            string // our lock node; "" for a Handle until it is found
	seq             int64
	data            holderData
	atMost, atLeast time.Duration
	grantedBy       time.Time // host clock once the answer that granted the lock had arrived
	handle          bool
	// childWatch, when set, is a watch on the name's children that the
	// acquire's judgement set: watch waits for it before it watches the
	// node itself.
	childWatch <-chan zk.Event

	mu        sync.Mutex
	version   int32
	until     time.Time // host clock
	timer     *time.Timer
	ended     bool
	releasing bool
	err       error
	done      chan struct{}
}

func (s *lease) Name() string  { return s.name }
func (s *lease) Owner() string { return s.owner }

// Token is the lock node's sequence number.
func (s *lease) Token() (int64, bool) { return s.seq, true }

func (s *lease) Done() <-chan struct{} { return s.done }

func (s *lease) Until() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.until
}

func (s *lease) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// start arms the at-most bound and the watch on our node.
func (s *lease) start() {
	s.mu.Lock()
	s.timer = time.AfterFunc(time.Until(s.until), s.expire)
	s.mu.Unlock()
	go s.watch()
}

// expire ends a lease whose at-most passed unrefreshed. Its node stays,
// as an expired row stays in a lease table: the next schedlock contender
// takes it over, and the session's end deletes it.
func (s *lease) expire() {
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		return
	}
	if left := time.Until(s.until); left > 0 {
		s.timer.Reset(left) // refreshed while the timer fired
		s.mu.Unlock()
		return
	}
	s.mu.Unlock()
	s.lose(fmt.Errorf("%w: the lease of %q ran out (at-most %s passed without a refresh)", dialects.ErrLeaseLost, s.name, s.atMost), false)
}

// watch tells the lease at once when its node is deleted by someone else
// (a force release, a takeover) or the watch ends with the session. While
// the acquire's watch on the name's children has not fired, nothing can
// have deleted the node unseen, so it waits for that first (an
// uncontended lock sends no request for its watch); then it watches the
// node itself.
func (s *lease) watch() {
	conn := s.locker.b.conn
	if s.childWatch != nil {
		select {
		case ev := <-s.childWatch:
			if s.isEnding() {
				return
			}
			if ev.Type == zk.EventNotWatching {
				s.lose(fmt.Errorf("%w: the watch on the lock node %s ended: %v", dialects.ErrLeaseLost, s.path, ev.Err), true)
				return
			}
		case <-s.done:
			return
		}
	}
	for {
		exists, _, ch, err := conn.ExistsW(s.path)
		if s.isEnding() {
			return
		}
		switch {
		case err != nil:
			s.lose(fmt.Errorf("%w: watching the lock node %s: %v", dialects.ErrLeaseLost, s.path, err), true)
			return
		case !exists:
			s.lose(fmt.Errorf("%w: the lock node %s was deleted by another client (a force release or a takeover)", dialects.ErrLeaseLost, s.path), false)
			return
		}
		select {
		case ev := <-ch:
			if s.isEnding() {
				return
			}
			switch ev.Type {
			case zk.EventNodeDeleted:
				s.lose(fmt.Errorf("%w: the lock node %s was deleted by another client (a force release or a takeover)", dialects.ErrLeaseLost, s.path), false)
				return
			case zk.EventNotWatching:
				s.lose(fmt.Errorf("%w: the watch on the lock node %s ended: %v", dialects.ErrLeaseLost, s.path, ev.Err), true)
				return
			}
		case <-s.done:
			return
		}
	}
}

func (s *lease) isEnding() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ended || s.releasing
}

// lose ends the lease with err; cleanup deletes its node as well, for a
// loss that does not free the lock by itself (a dropped connection whose
// session may live on).
func (s *lease) lose(err error, cleanup bool) {
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		return
	}
	s.end(err)
	s.mu.Unlock()
	if cleanup && s.path != "" {
		s.locker.b.deleteNode(s.path)
	}
}

// end marks the lease ended with err (nil: released). s.mu is held.
func (s *lease) end(err error) {
	s.ended, s.err = true, err
	if s.timer != nil {
		s.timer.Stop()
	}
	close(s.done)
	s.locker.b.untrack(s)
}

// Refresh implements dialects.Lease: it writes the node's data again,
// which moves its modification time, the start of its lease on the
// server clock, to now.
func (s *lease) Refresh(ctx context.Context) error {
	return wrap("refresh", s.refresh(ctx))
}

func (s *lease) refresh(ctx context.Context) error {
	s.mu.Lock()
	if s.ended && !s.handle {
		s.mu.Unlock()
		return fmt.Errorf("%w: refresh of %q after the lease ended", dialects.ErrLeaseLost, s.name)
	}
	if !s.handle && !time.Now().Before(s.until) {
		s.mu.Unlock()
		s.lose(fmt.Errorf("%w: the lease of %q ran out (at-most %s passed without a refresh)", dialects.ErrLeaseLost, s.name, s.atMost), false)
		return s.Err()
	}
	s.mu.Unlock()
	path, version, data, err := s.target(ctx, "refresh")
	if err != nil {
		return err
	}
	before := time.Now()
	stat, err := call(ctx, func() (*zk.Stat, error) { return s.locker.b.conn.Set(path, data, version) })
	if err != nil {
		return s.failed(ctx, "refresh", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended && !s.handle { // ran out, or the session was lost, meanwhile
		return s.err
	}
	s.version = stat.Version
	s.until = before.Add(s.atMost)
	if s.timer != nil {
		s.timer.Reset(s.atMost)
	}
	return nil
}

// target is the node a call acts on, its version and the data to write:
// our own for a lease, the owner's node found now for a Handle (an owner
// check: a node of another owner is ErrNotOwner).
func (s *lease) target(ctx context.Context, op string) (string, int32, []byte, error) {
	if !s.handle {
		// Our node's path is this acquire's alone: any version of it is
		// ours (a Handle of the same owner may have written it).
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.path, -1, s.data.bytes(), nil
	}
	dir := s.locker.NamePath(s.name)
	children, err := call(ctx, func() ([]string, error) { ch, _, err := s.locker.b.conn.Children(dir); return ch, err })
	if errors.Is(err, zk.ErrNoNode) {
		return "", 0, nil, fmt.Errorf("%w: %s of %q: the lock is free", dialects.ErrLeaseLost, op, s.name)
	}
	if err != nil {
		return "", 0, nil, fmt.Errorf("list %s: %w", dir, err)
	}
	nodes := sortedLockNodes(children)
	for i, n := range nodes {
		if s.seq != 0 && n.seq != s.seq || s.seq == 0 && i > 0 {
			continue
		}
		got, found, err := s.locker.b.readNode(ctx, dir, n)
		if err != nil {
			return "", 0, nil, err
		}
		if !found {
			break
		}
		if got.owner != s.owner {
			return "", 0, nil, fmt.Errorf("%w: %s of %q: held by %s", dialects.ErrNotOwner, op, s.name, got.holderName())
		}
		data := got.data
		if !got.schedlock {
			data = holderData{}
		}
		s.mu.Lock()
		s.path, s.seq, s.data = dir+"/"+n.name, n.seq, data
		s.mu.Unlock()
		if !got.schedlock {
			return s.path, got.stat.Version, nil, nil
		}
		return s.path, got.stat.Version, data.bytes(), nil
	}
	if len(nodes) > 0 && s.seq != 0 {
		got, found, err := s.locker.b.readNode(ctx, dir, nodes[0])
		if err == nil && found {
			return "", 0, nil, fmt.Errorf("%w: %s of %q: held by %s (token %d, not %d)", dialects.ErrNotOwner, op, s.name, got.holderName(), got.seq, s.seq)
		}
	}
	return "", 0, nil, fmt.Errorf("%w: %s of %q: the lock is free", dialects.ErrLeaseLost, op, s.name)
}

// failed turns the error of a write to our node into the lease's verdict.
func (s *lease) failed(ctx context.Context, op string, err error) error {
	switch {
	case errors.Is(err, zk.ErrNoNode):
		lost := fmt.Errorf("%w: %s of %q: its lock node is gone (taken over, force-released, or its session ended)", dialects.ErrLeaseLost, op, s.name)
		s.loseOrEnd(lost)
		return lost
	case errors.Is(err, zk.ErrBadVersion):
		return fmt.Errorf("%w: %s of %q: its lock node was written by another client", dialects.ErrNotOwner, op, s.name)
	case errors.Is(err, zk.ErrNoAuth):
		return s.locker.b.noAuth(s.path, "write", err)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	}
	_ = ctx
	return fmt.Errorf("%s of %q: %w", op, s.name, err)
}

func (s *lease) loseOrEnd(err error) {
	if s.handle {
		return
	}
	s.lose(err, false)
}

// Release implements dialects.Lease. Before locked-at plus at-least it
// writes the at-least node in the same transaction as it deletes the lock
// node; after, it deletes the lock node alone.
func (s *lease) Release(ctx context.Context) error {
	return wrap("release", s.release(ctx))
}

func (s *lease) release(ctx context.Context) error {
	s.mu.Lock()
	if s.ended && !s.handle {
		s.mu.Unlock()
		return fmt.Errorf("%w: release of %q after the lease ended", dialects.ErrLeaseLost, s.name)
	}
	s.releasing = true
	s.mu.Unlock()
	err := s.deleteNode(ctx)
	if err != nil && s.handle && errors.Is(err, dialects.ErrLeaseLost) {
		if freed, kerr := s.deleteAtLeast(ctx); kerr != nil || freed {
			err = kerr
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.releasing = false
		return err
	}
	if !s.ended {
		s.end(nil)
	}
	return nil
}

// atLeastMargin is how long after at-least has passed since the grant
// (on the host clock, counted from when the granting answer arrived, so
// never from before the grant) a release still writes the at-least node,
// whose end the server judges on its own clock: a node past its end is
// harmless and deleted by the next acquire.
const atLeastMargin = 2 * time.Second

func (s *lease) deleteNode(ctx context.Context) error {
	conn := s.locker.b.conn
	path, version, _, err := s.target(ctx, "release")
	if err != nil {
		return err
	}
	if s.atLeast <= 0 || (!s.handle && time.Since(s.grantedBy) > s.atLeast+atLeastMargin) {
		_, err := call(ctx, func() (struct{}, error) { return struct{}{}, conn.Delete(path, version) })
		if err != nil {
			return s.failed(ctx, "release", err)
		}
		return nil
	}
	lockedAt := s.data.LockedAt
	if lockedAt == 0 {
		_, stat, err := s.locker.b.get(ctx, path)
		if err != nil {
			return s.failed(ctx, "release", err)
		}
		lockedAt = stat.Ctime
	}
	keep := atLeastData{Tool: toolName, Owner: s.owner, Token: s.seq, LockedAt: lockedAt, Until: lockedAt + s.atLeast.Milliseconds()}
	keepPath := path[:lastSlash(path)] + "/" + atLeastNode
	ops := []any{
		&zk.CreateRequest{Path: keepPath, Data: keep.bytes(), Acl: s.locker.b.acl, Flags: 0},
		&zk.DeleteRequest{Path: path, Version: version},
	}
	for try := 0; try < 2; try++ {
		res, err := call(ctx, func() ([]zk.MultiResponse, error) { return conn.Multi(ops...) })
		if err == nil {
			return nil
		}
		if len(res) == 2 && errors.Is(res[0].Error, zk.ErrNodeExists) && try == 0 {
			ops[0] = &zk.SetDataRequest{Path: keepPath, Data: keep.bytes(), Version: -1}
			continue
		}
		if len(res) == 2 && res[1].Error != nil {
			err = res[1].Error
		}
		return s.failed(ctx, "release", err)
	}
	return nil
}

// deleteAtLeast is a Handle's release of a lock its owner released and
// its at-least still keeps (no lock node, an at-least node): the at-least
// node is deleted at the version read, while it is still owner's (and
// token's). freed is false when there is no such node.
func (s *lease) deleteAtLeast(ctx context.Context) (freed bool, err error) {
	p := s.locker.NamePath(s.name) + "/" + atLeastNode
	data, stat, err := s.locker.b.get(ctx, p)
	if errors.Is(err, zk.ErrNoNode) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read %s: %w", p, err)
	}
	keep, ok := parseAtLeast(data)
	switch {
	case !ok:
		return false, nil
	case keep.Owner != s.owner:
		return false, fmt.Errorf("%w: release of %q: kept for the at-least of %s", dialects.ErrNotOwner, s.name, keep.Owner)
	case s.seq != 0 && keep.Token != s.seq:
		return false, fmt.Errorf("%w: release of %q: kept for the at-least of token %d, not %d", dialects.ErrNotOwner, s.name, keep.Token, s.seq)
	}
	_, err = call(ctx, func() (struct{}, error) { return struct{}{}, s.locker.b.conn.Delete(p, stat.Version) })
	switch {
	case errors.Is(err, zk.ErrNoNode), errors.Is(err, zk.ErrBadVersion):
		return false, fmt.Errorf("%w: release of %q: its at-least node changed while it was released", dialects.ErrLeaseLost, s.name)
	case err != nil:
		return false, fmt.Errorf("delete %s: %w", p, err)
	}
	return true, nil
}

// parseAtLeast reads an at-least node's data.
func parseAtLeast(data []byte) (atLeastData, bool) {
	var d atLeastData
	if err := json.Unmarshal(data, &d); err != nil || d.Tool != toolName || d.Until == 0 {
		return d, false
	}
	return d, true
}
