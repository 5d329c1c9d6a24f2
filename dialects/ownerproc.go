package dialects

import (
	"os"
	"strconv"
	"strings"
)

// OwnerProcessGone reports whether owner names a process of this host that
// no longer runs, and which: an owner of NewOwner's form "host:pid:…"
// whose host is this host's name (os.Hostname) and whose process id is
// not running here (or is a zombie, killed and not yet reaped). Any other
// owner, another host's, or a process that runs, gives false: a process
// id taken again by a new process reads as running, so an answer of true
// is never a guess about a live holder — unless two hosts share a name.
func OwnerProcessGone(owner string) (pid int, gone bool) {
	host, rest, ok := strings.Cut(owner, ":")
	if !ok || host == "" {
		return 0, false
	}
	digits, _, ok := strings.Cut(rest, ":")
	if !ok {
		return 0, false
	}
	pid, err := strconv.Atoi(digits)
	if err != nil || pid <= 0 || strconv.Itoa(pid) != digits {
		return 0, false
	}
	if self, err := os.Hostname(); err != nil || self != host {
		return 0, false
	}
	return pid, !processRuns(pid)
}
