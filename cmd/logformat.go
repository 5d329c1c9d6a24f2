package cmd

import (
	"bytes"
	"context"
	"fmt"
	"github.com/schedlock/schedlock/internal/output"
	"io"
	"log/slog"
	"strings"
	"sync"

	"github.com/schedlock/schedlock/internal/elide"
)

// The values of --log-format.
const (
	// LogText writes diagnostics as lines for people: "schedlock: …".
	LogText = "text"
	// LogJSON writes each diagnostic line as one JSON object (log/slog's
	// JSON handler): time, level, msg, command.
	LogJSON = "json"
)

// logFormats are the values --log-format takes, for completion and help.
var logFormats = []string{LogText, LogJSON}

// EnvLogFormat is the variable of --log-format.
var EnvLogFormat = FlagEnvName("log-format")

// jsonLog is stderr in json mode: every line the command writes there
// becomes one slog record, "schedlock: warning: …" at WARN, everything
// else at INFO, and the final error (LogError) at ERROR. What is not a
// diagnostic — run's COMMAND's own stderr, a confirmation prompt — goes to
// raw instead (rawStderr).
type jsonLog struct {
	raw io.Writer

	mu      sync.Mutex
	logger  *slog.Logger
	partial []byte // the unfinished last line
}

func newJSONLog(raw io.Writer) *jsonLog {
	return &jsonLog{raw: raw, logger: slog.New(jsonLogHandler(raw))}
}

// jsonLogHandler is slog's JSON handler with each record's time in UTC with
// milliseconds, as every other time schedlock writes in JSON
// (output.TimeLayout: "2025-01-02T03:04:05.600Z"), not slog's local time
// with nanoseconds.
func jsonLogHandler(w io.Writer) slog.Handler {
	return slog.NewJSONHandler(w, &slog.HandlerOptions{ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey && len(groups) == 0 && a.Value.Kind() == slog.KindTime {
			a.Value = slog.StringValue(output.Time(a.Value.Time()))
		}
		return a
	}})
}

// withCommand adds the command's path to every record from now on.
func (w *jsonLog) withCommand(path string) {
	w.mu.Lock()
	w.logger = slog.New(jsonLogHandler(w.raw)).With("command", path)
	w.mu.Unlock()
}

// Write logs every complete line of p; an unfinished one waits for the
// rest (or Flush).
func (w *jsonLog) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.partial = append(w.partial, p...)
	for {
		i := bytes.IndexByte(w.partial, '\n')
		if i < 0 {
			break
		}
		w.logLine(string(w.partial[:i]))
		w.partial = w.partial[i+1:]
	}
	return len(p), nil
}

// Flush logs an unfinished last line.
func (w *jsonLog) Flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.flushLocked()
}

func (w *jsonLog) flushLocked() {
	if len(w.partial) > 0 {
		w.logLine(string(w.partial))
		w.partial = nil
	}
}

// LogError logs the error that ends the command, with its exit code; main
// calls it instead of printing "schedlock: <error>".
func (w *jsonLog) LogError(msg string, exitCode int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.flushLocked()
	w.logger.Error(strings.TrimPrefix(msg, "schedlock: "), "exit_code", exitCode)
}

// logLine logs one line at the level its wording says.
func (w *jsonLog) logLine(line string) {
	line = strings.TrimSpace(strings.ReplaceAll(line, "\r", ""))
	if line == "" {
		return
	}
	level, msg := slog.LevelInfo, strings.TrimPrefix(line, "schedlock: ")
	for prefix, l := range map[string]slog.Level{"warning: ": slog.LevelWarn, "note: ": slog.LevelInfo, "error: ": slog.LevelError} {
		if rest, ok := strings.CutPrefix(msg, prefix); ok {
			level, msg = l, rest
		}
	}
	w.logger.Log(context.Background(), level, msg)
}

// rawStderr is where output that is not a diagnostic goes: the stream
// under a json log, else w itself.
func rawStderr(w io.Writer) io.Writer {
	if j, ok := w.(*jsonLog); ok {
		return j.raw
	}
	return w
}

// logFormatFromArgs finds the log format of a command line before it is
// parsed — --log-format VALUE, --log-format=VALUE before "--", else the
// variable — so that errors of the parsing itself are logged alike.
func logFormatFromArgs(args []string, getenv func(string) string) string {
	for i, a := range args {
		switch {
		case a == "--":
			return getenv(EnvLogFormat)
		case a == "--log-format" && i+1 < len(args):
			return args[i+1]
		case strings.HasPrefix(a, "--log-format="):
			return strings.TrimPrefix(a, "--log-format=")
		}
	}
	return getenv(EnvLogFormat)
}

// checkLogFormat validates --log-format.
func checkLogFormat(path, format string) error {
	for _, f := range logFormats {
		if format == f {
			return nil
		}
	}
	return usageErrorf(path, "--log-format must be %s, got %s", elide.Whole(strings.Join(logFormats, " or ")), fmt.Sprintf("%q", format))
}

// logSwitch installs the json log on the factory's stderr, or takes it
// away again, keeping the stream it replaced.
type logSwitch struct {
	f         *Factory
	raw       io.Writer
	stderrTTY bool
}

func newLogSwitch(f *Factory) *logSwitch {
	return &logSwitch{f: f, raw: f.IO.ErrOut, stderrTTY: f.IO.IsStderrTTY()}
}

// set puts stderr in format (anything but LogJSON is text); records name
// command when it is known. In json mode stderr counts as no terminal, so
// no progress line is drawn on it.
func (s *logSwitch) set(format, command string) {
	if format != LogJSON {
		s.f.IO.ErrOut = s.raw
		s.f.IO.SetStderrTTY(s.stderrTTY)
		return
	}
	j, ok := s.f.IO.ErrOut.(*jsonLog)
	if !ok {
		j = newJSONLog(s.raw)
		s.f.IO.ErrOut = j
		s.f.IO.SetStderrTTY(false)
	}
	if command != "" {
		j.withCommand(command)
	}
}

// flush logs what is left of an unfinished line.
func (s *logSwitch) flush() {
	if j, ok := s.f.IO.ErrOut.(*jsonLog); ok {
		j.Flush()
	}
}
