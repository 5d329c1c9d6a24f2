//go:build !unix

package metrics

import "context"

// noFollow is 0 where O_NOFOLLOW is missing: the file's type is looked at
// before it is opened, and again once open.
const noFollow = 0

// isLoop is false where opens do not refuse symbolic links.
func isLoop(error) bool { return false }

// lockFile does nothing where flock(2) is missing: there, concurrent jobs
// must each write a file of their own.
func lockFile(context.Context, string) (func(), error) { return func() {}, nil }
