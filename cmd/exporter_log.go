package cmd

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
)

// exporterLogger is the exporter's log: one line per record on stderr,
// "schedlock: warning: scrape failed dsn=… reason=… err=…", scrubbed of
// passwords; -q keeps only warnings and errors. Under --log-format json
// each line becomes a JSON record (jsonLog).
func exporterLogger(o *ExporterOptions) *slog.Logger {
	level := slog.LevelInfo
	if o.Global.Quiet {
		level = slog.LevelWarn
	}
	return slog.New(&lineHandler{w: o.IO.ErrOut, level: level, scrub: o.Factory.Scrubber.String, mu: &sync.Mutex{}})
}

// lineHandler writes slog records as schedlock's stderr lines.
type lineHandler struct {
	w     io.Writer
	level slog.Level
	scrub func(string) string
	attrs []slog.Attr
	mu    *sync.Mutex
}

func (h *lineHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level }

func (h *lineHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString("schedlock: ")
	switch {
	case r.Level >= slog.LevelError:
		b.WriteString("error: ")
	case r.Level >= slog.LevelWarn:
		b.WriteString("warning: ")
	}
	b.WriteString(r.Message)
	write := func(a slog.Attr) bool {
		v := a.Value.Resolve().String()
		if v == "" || strings.ContainsAny(v, " \t\"=") {
			v = strconv.Quote(v)
		}
		fmt.Fprintf(&b, " %s=%s", a.Key, v)
		return true
	}
	for _, a := range h.attrs {
		write(a)
	}
	r.Attrs(write)
	line := strings.ReplaceAll(h.scrub(b.String()), "\n", " ") + "\n"
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := io.WriteString(h.w, line)
	return err
}

func (h *lineHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := *h
	c.attrs = append(append([]slog.Attr(nil), h.attrs...), attrs...)
	return &c
}

// WithGroup is not used by the exporter; groups are flattened.
func (h *lineHandler) WithGroup(string) slog.Handler { return h }
