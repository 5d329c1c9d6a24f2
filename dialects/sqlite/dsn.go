package sqlite

import (
	"net/url"
	"strconv"
	"strings"
)

// BusyTimeoutMs is how long DSN lets a connection wait for SQLite's write
// lock before a statement fails with SQLITE_BUSY.
const BusyTimeoutMs = 10000

// DSN returns the modernc.org/sqlite data source name for path (a file
// name, "file:" URI or ":memory:", with or without a query) with the
// settings that let several connections and processes write one file:
//
//   - _pragma=busy_timeout(10000): wait up to 10 s for the write lock
//     instead of failing at once with SQLITE_BUSY;
//   - _pragma=journal_mode(WAL): readers do not block the writer, nor the
//     writer the readers.
//
// A setting already present in path, as _pragma or as modernc's
// _busy_timeout/_timeout or _journal_mode/_journal keys, is kept as given.
// WAL is persistent in the file and needs a local file system; an
// in-memory database ignores it.
//
// Each acquire and release is a commit, which SQLite syncs to disk by
// default: that sync, not the SQL, bounds the lock rate. Adding
// _pragma=synchronous(NORMAL) (not done here) made acquire+release about
// four times faster in BenchmarkTableCycle, at the cost of the last commits
// on power loss — which for locks on one host also ends their holders.
func DSN(path string) string {
	query := ""
	if i := strings.IndexByte(path, '?'); i >= 0 {
		query = path[i+1:]
	}
	q, _ := url.ParseQuery(query) // a malformed query is left for the driver to report
	var add []string
	if !hasSetting(q, "busy_timeout", "_busy_timeout", "_timeout") {
		add = append(add, "_pragma=busy_timeout("+strconv.Itoa(BusyTimeoutMs)+")")
	}
	if !hasSetting(q, "journal_mode", "_journal_mode", "_journal") {
		add = append(add, "_pragma=journal_mode(WAL)")
	}
	if len(add) == 0 {
		return path
	}
	sep := "?"
	switch {
	case strings.HasSuffix(path, "?") || strings.HasSuffix(path, "&"):
		sep = ""
	case strings.Contains(path, "?"):
		sep = "&"
	}
	return path + sep + strings.Join(add, "&")
}

// hasSetting reports whether q sets pragma through _pragma or any of keys.
func hasSetting(q url.Values, pragma string, keys ...string) bool {
	for _, k := range keys {
		if q.Has(k) {
			return true
		}
	}
	for _, v := range q["_pragma"] {
		if strings.HasPrefix(strings.ToLower(strings.TrimSpace(v)), pragma) {
			return true
		}
	}
	return false
}
