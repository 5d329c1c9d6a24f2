//go:build unix && !linux

package proc

import "syscall"

// setParentDeathSignal does nothing: only Linux can have the kernel signal
// a child when its parent dies.
func setParentDeathSignal(*syscall.SysProcAttr) {}

// groupRunning reports whether group pgid has a member (zombies included:
// without /proc they cannot be told apart).
func groupRunning(pgid int) bool { return groupExists(pgid) }
