//go:build unix

package metrics

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// noFollow makes an open fail on a symbolic link, and not wait for the
// other end of a FIFO.
const noFollow = syscall.O_NOFOLLOW | syscall.O_NONBLOCK

// isLoop reports whether err is an open's refusal of a symbolic link.
func isLoop(err error) bool { return errors.Is(err, syscall.ELOOP) }

// lockPoll bounds the pause between two tries for a held lock file.
const lockPoll = 50 * time.Millisecond

// lockFile takes an exclusive flock(2) on path, creating it as a regular
// file, and returns the function that releases it. It tries without
// blocking, again and again, until it has the lock or ctx ends. The lock
// file stays: removing it would let two updaters lock two different
// files of the same name.
func lockFile(ctx context.Context, path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|noFollow, 0o644)
	if err != nil {
		if isLoop(err) {
			return nil, fmt.Errorf("%s is a symbolic link, %w", path, ErrNotRegular)
		}
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil {
		err = regular(path, fi)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	pause := time.Millisecond
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if err != syscall.EWOULDBLOCK && err != syscall.EINTR {
			f.Close()
			return nil, err
		}
		t := time.NewTimer(pause)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			f.Close()
			return nil, fmt.Errorf("%s is held by another update: %w", path, ctx.Err())
		}
		pause = min(2*pause, lockPoll)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		_ = f.Close()
	}, nil
}
