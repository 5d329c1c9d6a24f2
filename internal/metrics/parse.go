package metrics

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// ErrForeign is returned when the file holds anything but schedlock's
// metrics: Update refuses to rewrite it.
var ErrForeign = errors.New("not schedlock's metrics")

// maxLine bounds one line of the file; a longer one is not schedlock's.
const maxLine = 64 << 10

// prefix starts the name of every metric schedlock writes.
const prefix = "schedlock_"

// known reports whether name is one of the metrics this package writes.
func known(name string) bool {
	return slices.ContainsFunc(families, func(f family) bool { return f.name == name })
}

// parse reads the file that format wrote. The file is schedlock's when
// every line is blank, a "# HELP" or "# TYPE" line of a schedlock_
// metric, or a sample of a schedlock_ metric; a sample of a metric this
// package writes must read as format writes it (NAME{lock="…"} VALUE).
// Anything else — another metric, another comment, a damaged sample, a
// line over 64 KiB — is an error matching ErrForeign that names the line
// and the file (name).
// An empty file is schedlock's. Samples of schedlock_ metrics this
// version does not write are accepted and not kept.
func parse(r io.Reader, name string) (state, error) {
	s := state{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxLine)
	n := 0
	for sc.Scan() {
		n++
		if !s.line(sc.Text()) {
			return nil, fmt.Errorf("line %d of %s is %w", n, name, ErrForeign)
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("line %d of %s is over %d KiB: %w", n+1, name, maxLine>>10, ErrForeign)
		}
		return nil, err
	}
	return s, nil
}

// line reads one line into s and reports whether it is schedlock's.
func (s state) line(line string) bool {
	line = strings.TrimSuffix(line, "\r")
	if strings.TrimSpace(line) == "" {
		return true
	}
	if rest, ok := strings.CutPrefix(line, "# "); ok {
		for _, kw := range []string{"HELP ", "TYPE "} {
			if after, ok := strings.CutPrefix(rest, kw); ok {
				name, _, _ := strings.Cut(after, " ")
				return ours(name)
			}
		}
		return false
	}
	end := strings.IndexAny(line, "{ ")
	if end < 0 || !ours(line[:end]) {
		return false
	}
	name := line[:end]
	if !known(name) {
		return true // a later version's metric: ours, not kept
	}
	rest, ok := strings.CutPrefix(line[end:], `{lock="`)
	if !ok {
		return false
	}
	lock, rest, ok := unescapeLabel(rest)
	if !ok {
		return false
	}
	rest, ok = strings.CutPrefix(rest, "} ")
	if !ok {
		return false
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
	if err != nil {
		return false
	}
	s.set(name, lock, v)
	return true
}

// ours reports whether name is a metric name under schedlock's prefix.
func ours(name string) bool {
	rest, ok := strings.CutPrefix(name, prefix)
	if !ok || rest == "" {
		return false
	}
	for _, c := range rest {
		if !(c == '_' || c == ':' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}
