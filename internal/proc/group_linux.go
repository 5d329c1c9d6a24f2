//go:build linux

package proc

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// setParentDeathSignal makes the kernel send SIGKILL to the child when the
// schedlock process dies (SIGKILL, OOM killer), so the child cannot run on
// without anyone keeping its lease alive. Only the child itself gets the
// signal, not processes it started; Go checks after setting it that the
// parent did not die in between. The kernel ties the signal to the thread
// that started the child, and Go ends a thread only when a goroutine exits
// while locked to it (runtime.LockOSThread), which schedlock never does.
func setParentDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }

// groupRunning reports whether a process of group pgid runs, from /proc:
// zombies, which an init that does not reap leaves behind, do not count.
func groupRunning(pgid int) bool {
	if !groupExists(pgid) {
		return false
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return true
	}
	want := strconv.Itoa(pgid)
	for _, e := range entries {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // exited meanwhile
		}
		// pid (comm) state ppid pgrp …; comm may hold spaces and parentheses.
		fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(fields) >= 3 && fields[2] == want && fields[0] != "Z" && fields[0] != "X" {
			return true
		}
	}
	return false
}
