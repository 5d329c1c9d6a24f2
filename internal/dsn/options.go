package dsn

import (
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/internal/duration"
)

// OptionPrefix marks a query parameter that is schedlock's, not the
// driver's. Such parameters are removed before the driver sees the DSN.
const OptionPrefix = "x-"

// Known x- options, by their name without the prefix.
const (
	// OptTable names the lock table (x-table=jobs_lock), optionally
	// schema-qualified.
	OptTable = "table"
	// OptPreset picks the lock-table layout (x-preset=shedlock).
	OptPreset = "preset"
	// OptStrategy picks session or table locks (x-strategy=table).
	OptStrategy = "strategy"
	// OptPartitionBound bounds how long the server keeps the session
	// locks of a client cut off by a silent network partition
	// (x-partition-bound=20s; default dialects.DefaultPartitionBound).
	OptPartitionBound = "partition-bound"
	// OptNamespace separates environments that share the database
	// (x-namespace=staging): see dialects.NamespacedName.
	OptNamespace = "namespace"
	// OptTimeZone is the writer time zone of the lock table's zone-less
	// times (x-time-zone=Europe/Berlin): see dialects.LoadTimeZone.
	OptTimeZone = "time-zone"
	// OptCreateFile lets a database file (SQLite) that does not exist be
	// created when it is opened (x-create-file=true); without it it is
	// refused (see DSN.MissingFile).
	OptCreateFile = "create-file"
	// OptSessionNames chooses how the session strategy names its locks
	// (x-session-names=raw; default scoped): see dialects.SessionNames.
	OptSessionNames = dialects.OptionSessionNames
	// OptSessionKey is the key derivation of raw session names on
	// PostgreSQL (x-session-key=hashtext): see dialects.SessionNames.
	OptSessionKey = dialects.OptionSessionKey
	// OptMaxConns bounds the connections the opened backend keeps
	// (x-max-conns=4; default dialects.DefaultMaxConns): see
	// dialects.OptionMaxConns.
	OptMaxConns = dialects.OptionMaxConns
)

// Bounds of x-partition-bound.
const (
	MinPartitionBound = time.Second
	MaxPartitionBound = time.Hour
)

var knownOptions = []string{OptCreateFile, OptMaxConns, OptNamespace, OptPartitionBound, OptPreset, OptSessionKey, OptSessionNames, OptStrategy, OptTable, OptTimeZone}

// Options are the schedlock-only settings a DSN carried as x- query
// parameters, keyed by name without the prefix ("table", not "x-table").
type Options map[string]string

// Table returns the lock table the options select (zero when none).
func (o Options) Table() dialects.Table {
	return dialects.Table{Preset: o[OptPreset], Name: o[OptTable], TimeZone: o[OptTimeZone]}
}

// Strategy returns the strategy the options select, or "" when none.
func (o Options) Strategy() dialects.Strategy {
	s, _ := dialects.ParseStrategy(o[OptStrategy]) // checked by validate
	return s
}

// SessionNames returns x-session-names and x-session-key (validated by
// Parse; the zero value when the DSN has neither).
func (o Options) SessionNames() dialects.SessionNames {
	n, _ := dialects.SessionNamesOf(o)
	return n
}

// Namespace returns x-namespace, "" when the DSN has none (the value was
// validated by Parse).
func (o Options) Namespace() string { return o[OptNamespace] }

// MaxConns returns x-max-conns, dialects.DefaultMaxConns when the DSN has
// none (the value was validated by Parse).
func (o Options) MaxConns() int { return dialects.MaxConnsOf(o) }

// PartitionBound returns x-partition-bound, 0 when the DSN has none (the
// value was validated by Parse).
func (o Options) PartitionBound() time.Duration {
	d, _ := ParsePartitionBound(o[OptPartitionBound])
	return d
}

// ParsePartitionBound parses a partition bound ("" is 0: the default) in
// Go's form or ISO 8601's (duration.Parse); it must lie between
// MinPartitionBound and MaxPartitionBound.
func ParsePartitionBound(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	d, err := duration.Parse(s)
	switch {
	case err != nil:
		return 0, fmt.Errorf("%q: %w", s, err)
	case d < MinPartitionBound || d > MaxPartitionBound:
		return 0, fmt.Errorf("%s is outside %s..%s", d, MinPartitionBound, MaxPartitionBound)
	}
	return d, nil
}

// splitOptions removes the x- parameters from raw's query and returns what
// is left and the options. The rest of the query keeps the spelling and
// order the user gave. Unknown x- names, repeated ones, bad escapes and
// invalid values are errors.
func splitOptions(raw string) (string, Options, error) {
	opts := Options{}
	q := queryStart(raw)
	if q < 0 {
		return raw, opts, nil
	}
	head, query, fragment := raw[:q], raw[q+1:], ""
	if h := strings.IndexByte(query, '#'); h >= 0 {
		query, fragment = query[:h], query[h:]
	}
	var keep []string
	for _, part := range strings.Split(query, "&") {
		key, value, _ := strings.Cut(part, "=")
		name, err := url.QueryUnescape(key)
		if err != nil || !strings.HasPrefix(strings.ToLower(name), OptionPrefix) {
			keep = append(keep, part)
			continue
		}
		name = strings.ToLower(strings.TrimPrefix(strings.ToLower(name), OptionPrefix))
		if !isKnown(name) {
			return "", nil, fmt.Errorf("unknown option %q: schedlock knows %s", key, optionList())
		}
		if _, dup := opts[name]; dup {
			return "", nil, fmt.Errorf("option %q is given twice", key)
		}
		v, err := url.QueryUnescape(value)
		if err != nil {
			return "", nil, fmt.Errorf("option %q: bad escape in its value", key)
		}
		opts[name] = v
	}
	if err := opts.validate(); err != nil {
		return "", nil, err
	}
	body := head
	if rest := strings.Join(keep, "&"); rest != "" {
		body += "?" + rest
	}
	return body + fragment, opts, nil
}

// queryStart is the index of the '?' that starts raw's query, or -1. In
// go-sql-driver's form the password may hold a '?', so the query starts
// after the last '/'.
func queryStart(raw string) int {
	from := 0
	if isNativeMySQL(raw) {
		from = strings.LastIndexByte(raw, '/') + 1
	}
	q := strings.IndexByte(raw[from:], '?')
	if q < 0 {
		return -1
	}
	return from + q
}

func isKnown(name string) bool {
	for _, k := range knownOptions {
		if k == name {
			return true
		}
	}
	return false
}

func optionList() string {
	names := make([]string, len(knownOptions))
	for i, k := range knownOptions {
		names[i] = OptionPrefix + k
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// validate checks the values of the known options.
func (o Options) validate() error {
	if s, ok := o[OptStrategy]; ok {
		if _, err := dialects.ParseStrategy(s); err != nil {
			return fmt.Errorf("option x-strategy: %w", err)
		}
	}
	if v, ok := o[OptNamespace]; ok {
		if v == "" {
			return fmt.Errorf("option x-namespace is empty: give a namespace such as staging, or leave the option out")
		}
		if err := dialects.CheckNamespace(v); err != nil {
			return fmt.Errorf("option x-namespace: %w", err)
		}
	}
	if v, ok := o[OptCreateFile]; ok {
		if _, err := strconv.ParseBool(v); err != nil {
			return fmt.Errorf("option x-create-file: %q is not true or false", v)
		}
	}
	names, err := dialects.ParseSessionNames(o[OptSessionNames], "")
	if err != nil {
		return fmt.Errorf("option x-session-names: %w", err)
	}
	if key := o[OptSessionKey]; key != "" {
		if !names.Raw {
			return fmt.Errorf("option x-session-key applies to raw session names: add x-session-names=raw")
		}
		if _, err := dialects.ParseSessionNames(dialects.SessionNamesRaw, key); err != nil {
			return fmt.Errorf("option x-session-key: %w", err)
		}
	}
	if names.Raw && o[OptNamespace] != "" {
		return fmt.Errorf("option x-namespace does not apply to raw session names (x-session-names=raw), which are taken as they are")
	}
	if v, ok := o[OptMaxConns]; ok {
		if _, err := dialects.ParseMaxConns(v); err != nil || v == "" {
			if err == nil {
				err = fmt.Errorf("empty: give a number of connections such as 4, or leave the option out (default %d)", dialects.DefaultMaxConns)
			}
			return fmt.Errorf("option x-max-conns: %w", err)
		}
	}
	if _, err := ParsePartitionBound(o[OptPartitionBound]); err != nil {
		return fmt.Errorf("option x-partition-bound: %w", err)
	}
	if _, err := dialects.LoadTimeZone(o[OptTimeZone]); err != nil {
		return fmt.Errorf("option x-time-zone: %w", err)
	}
	if _, err := o.Table().Schema(); err != nil {
		return fmt.Errorf("option x-table/x-preset: %w", err)
	}
	return nil
}
