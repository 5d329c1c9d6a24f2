//go:build unix

package dialects

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"syscall"
)

// processRuns reports whether process pid exists on this host and is not
// a zombie. A process of another user (EPERM) runs.
func processRuns(pid int) bool {
	err := syscall.Kill(pid, 0)
	if errors.Is(err, syscall.ESRCH) {
		return false
	}
	// Linux: a killed process that its parent has not reaped yet is a
	// zombie, state Z in /proc/PID/stat (after the parenthesised name).
	stat, rerr := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if rerr == nil {
		if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
			return false
		}
	}
	return true
}
