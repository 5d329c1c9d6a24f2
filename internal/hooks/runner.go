package hooks

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/schedlock/schedlock/internal/proc"
)

// Environment variables a command hook gets (besides schedlock's own).
const (
	EnvEvent    = "SCHEDLOCK_EVENT"
	EnvLockName = "SCHEDLOCK_LOCK_NAME"
	EnvOwner    = "SCHEDLOCK_OWNER"
	// EnvExitCode is set for success, failure and lost.
	EnvExitCode = "SCHEDLOCK_EXIT_CODE"
	// EnvDuration is COMMAND's run time in seconds (end events of a run
	// that started it).
	EnvDuration = "SCHEDLOCK_DURATION_SECONDS"
	// EnvReason says why schedlock ended a failed run (Info.Reason); set
	// only then.
	EnvReason = "SCHEDLOCK_REASON"
)

// Runner carries out single hooks. The zero value posts with
// http.DefaultClient and sends command output to stderr.
type Runner struct {
	// Client posts URL hooks (http.DefaultClient when nil).
	Client *http.Client
	// UserAgent is sent with each request ("schedlock" when empty).
	UserAgent string
	// Stderr gets a command hook's stdout and stderr (os.Stderr when nil).
	Stderr io.Writer
	// Unset names variables of schedlock's environment a command hook
	// does not inherit (the DSN variables, which may hold a password).
	Unset []string
}

// run carries out h for info under ctx and returns how to name it in a
// message (redacted) and its error.
func (r *Runner) run(ctx context.Context, h Hook, info Info) (string, error) {
	switch h.Kind {
	case KindCommand:
		return "command " + CommandName(h.Command), r.command(ctx, h.Command, info)
	case KindPing:
		u := PingURL(h.URL, info.Event, info.ExitCode)
		return "POST " + RedactURL(u, h.URL), r.post(ctx, u, info)
	default:
		return "POST " + RedactURL(h.URL, nil), r.post(ctx, h.URL, info)
	}
}

// command runs line through the shell with info in its environment, and
// kills its process group when ctx ends first. A command hook is not
// retried: running it twice may not be safe.
func (r *Runner) command(ctx context.Context, line string, info Info) error {
	argv := []string{"/bin/sh", "-c", line}
	if runtime.GOOS == "windows" {
		argv = []string{"cmd", "/C", line}
	}
	env := []string{EnvEvent + "=" + string(info.Event), EnvLockName + "=" + info.Lock}
	if info.Owner != "" {
		env = append(env, EnvOwner+"="+info.Owner)
	}
	if info.hasExitCode() {
		env = append(env, EnvExitCode+"="+strconv.Itoa(info.ExitCode))
	}
	if info.Reason != "" {
		env = append(env, EnvReason+"="+info.Reason)
	}
	if !info.Started.IsZero() && info.Event != Start {
		env = append(env, EnvDuration+"="+strconv.FormatFloat(info.Time.Sub(info.Started).Seconds(), 'f', 3, 64))
	}
	stderr := r.Stderr
	if stderr == nil {
		stderr = os.Stderr
	}
	child, err := proc.Start(argv, env, proc.IO{Out: stderr, Err: stderr, Unset: r.Unset})
	if err != nil {
		return err
	}
	select {
	case <-child.Done():
	case <-ctx.Done():
		child.Stop(0)
		return fmt.Errorf("killed: %w", ctx.Err())
	}
	if code := child.ExitCode(); code != 0 {
		return fmt.Errorf("exited with code %d", code)
	}
	return nil
}

// CommandName is how messages name a command hook: its first word only,
// since the rest may hold a token ("curl -H 'Authorization: …'").
func CommandName(line string) string {
	fields := strings.Fields(line)
	if len(fields) == 0 {
		return `""`
	}
	if len(fields) == 1 {
		return fields[0]
	}
	return fields[0] + " …"
}
