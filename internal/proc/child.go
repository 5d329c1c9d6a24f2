// Package proc starts and supervises the child command of `schedlock run`:
// its own process group, signals forwarded to the whole group, and a
// graceful stop (SIGTERM, then SIGKILL after a grace period).
package proc

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"time"
)

// Exit codes for a child that could not start, as shells use them.
const (
	ExitNotFound      = 127 // the command does not exist
	ExitNotExecutable = 126 // it exists but cannot be executed
)

// StartError is returned by Start when the command could not be started.
type StartError struct {
	Command string
	Code    int // ExitNotFound or ExitNotExecutable
	Err     error
}

func (e *StartError) Error() string {
	if e.Code == ExitNotFound {
		return fmt.Sprintf("command not found: %s", e.Command)
	}
	return fmt.Sprintf("cannot execute %s: %v", e.Command, e.Err)
}

func (e *StartError) Unwrap() error { return e.Err }

// pipeDrain is how long after the child's exit output that is not written
// straight to a file is still copied (see exec.Cmd.WaitDelay).
const pipeDrain = 250 * time.Millisecond

// Child is a started command in its own process group.
type Child struct {
	cmd      *exec.Cmd
	waitOnce sync.Once
	done     chan struct{}
	state    *os.ProcessState
	waitErr  error
}

// IO is where the child's standard streams go, and which variables of the
// current environment it does not inherit.
type IO struct {
	In       io.Reader
	Out, Err io.Writer
	// Unset names variables of the current environment the child does not
	// get (a DSN that holds a password); env passed to Start still sets
	// them.
	Unset []string
}

// Start runs argv[0] with argv[1:] in a new process group, with env appended
// to the current environment and the given streams passed through. On Linux
// the kernel kills the child (SIGKILL) if the calling process dies first.
func Start(argv []string, env []string, streams IO) (*Child, error) {
	if len(argv) == 0 {
		return nil, errors.New("no command given")
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		code := ExitNotFound
		if errors.Is(err, os.ErrPermission) {
			code = ExitNotExecutable
		}
		return nil, &StartError{Command: argv[0], Code: code, Err: err}
	}
	cmd := exec.Command(path, argv[1:]...)
	cmd.Env = append(withoutVars(os.Environ(), streams.Unset), env...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = streams.In, streams.Out, streams.Err
	// Streams that are not files are copied through pipes; a background job
	// the child leaves behind keeps those pipes open. The child's exit must
	// still be seen at once, so the copying gets only this long after it.
	cmd.WaitDelay = pipeDrain
	setProcessGroup(cmd)
	if err := cmd.Start(); err != nil {
		code := ExitNotExecutable
		if errors.Is(err, os.ErrNotExist) {
			code = ExitNotFound
		}
		return nil, &StartError{Command: argv[0], Code: code, Err: err}
	}
	c := &Child{cmd: cmd, done: make(chan struct{})}
	go c.wait()
	return c, nil
}

func (c *Child) wait() {
	c.waitErr = c.cmd.Wait()
	c.state = c.cmd.ProcessState
	close(c.done)
}

// Pid is the child's process id (and its process group id).
func (c *Child) Pid() int { return c.cmd.Process.Pid }

// Done is closed when the child has exited.
func (c *Child) Done() <-chan struct{} { return c.done }

// ExitCode is the child's exit code once Done is closed: its own code, or
// 128+signal when a signal ended it.
func (c *Child) ExitCode() int {
	<-c.done
	return exitCode(c.state)
}

// Signal sends sig to the child's whole process group.
func (c *Child) Signal(sig os.Signal) error { return signalGroup(c.cmd.Process, sig) }

// Stop asks the child's process group to end (SIGTERM; on Windows the
// process is killed at once) and gives the child and every other process of
// its group up to grace to exit; then it kills the group (SIGKILL). It
// returns when the child has exited and no process of its group runs any
// more (or, should one survive SIGKILL, a second after it). Stop also works
// after the child exited on its own: it then ends what the child left
// running in its group (background jobs), if anything.
func (c *Child) Stop(grace time.Duration) { c.StopOrKill(grace, nil) }

// StopOrKill is Stop, except that the group is killed (SIGKILL) at once
// when kill closes during the grace.
func (c *Child) StopOrKill(grace time.Duration, kill <-chan struct{}) {
	deadline := time.Now().Add(grace)
	if c.exited() && !groupRunning(c.Pid()) {
		return
	}
	_ = terminateGroup(c.cmd.Process)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-c.done:
	case <-t.C:
	case <-kill:
		deadline = time.Now()
	}
	if !c.waitGroup(deadline, kill) {
		_ = killGroup(c.cmd.Process)
		<-c.done
		c.waitGroup(time.Now().Add(time.Second), nil)
	}
}

// GroupRunning reports whether a process of the child's group still runs
// (zombies aside where the system tells them apart); after the child exited
// these are the background jobs it left behind.
func (c *Child) GroupRunning() bool { return !c.exited() || groupRunning(c.Pid()) }

func (c *Child) exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// waitGroup waits until the child has exited and no process of its group
// runs, or until deadline or abort; it reports whether the group is gone.
func (c *Child) waitGroup(deadline time.Time, abort <-chan struct{}) bool {
	for {
		// The deadline first: once it has come, a child still running is
		// killed at once, not a scan of /proc later (slow on a busy
		// machine).
		if !time.Now().Before(deadline) {
			return c.exited() && !c.GroupRunning()
		}
		if !c.GroupRunning() {
			return true
		}
		select {
		case <-abort:
			return false
		case <-time.After(groupPoll):
		}
	}
}

// groupPoll is how often Stop checks whether the group has gone.
const groupPoll = 20 * time.Millisecond
