//go:build windows

package proc

import (
	"os"
	"os/exec"
)

func setProcessGroup(*exec.Cmd) {}

func signalGroup(p *os.Process, sig os.Signal) error {
	if sig == os.Interrupt {
		return p.Kill() // Windows cannot deliver SIGINT to another console process group.
	}
	return p.Signal(sig)
}

func terminateGroup(p *os.Process) error { return p.Kill() }

func killGroup(p *os.Process) error { return p.Kill() }

func exitCode(st *os.ProcessState) int { return st.ExitCode() }

// groupRunning is false: a Windows child has no process group of its own,
// and Stop kills the process itself.
func groupRunning(int) bool { return false }
