// Package oraliketest is what the Oracle and Dameng simulators share:
// reading the dialect's golden files back into the statements the
// simulated server understands, the lease tables (their statements run
// from their text by leasesim, with a window in which a concurrent insert
// wins), the row-lock probe's tables, DBMS_LOCK (dbmslocktest.Server),
// and the record of statements the server did not understand. Each
// dialect's simulator embeds a *Server, answers the statements of its own
// (detection, listing, kill) and gives the server's errors and value
// shapes in a Dialect.
package oraliketest

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/internal/fakesql"
)

// ParseGolden reads the golden file testdata/file back into op → SQL: a
// section is "-- <op> (<note>)" and the SQL on the lines after it.
func ParseGolden(t testing.TB, file string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	out := map[string]string{}
	var op string
	var body []string
	flush := func() {
		if op != "" {
			out[op] = strings.TrimRight(strings.Join(body, "\n"), "\n")
		}
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "-- ") {
			flush()
			op, _, _ = strings.Cut(strings.TrimPrefix(line, "-- "), " ")
			body = nil
			continue
		}
		body = append(body, line)
	}
	flush()
	return out
}

// PresetTables is one table per preset, under the preset's own name (the
// names of the golden files).
func PresetTables() []dialects.Table {
	var out []dialects.Table
	for _, p := range dialects.Presets() {
		out = append(out, dialects.Table{Preset: p})
	}
	return out
}

// PresetSchema is the schema of preset's table under its own name.
func PresetSchema(t testing.TB, preset string) dialects.Schema {
	t.Helper()
	s, err := dialects.Table{Preset: preset}.Schema()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Open returns a *sql.DB on the simulated server (s.Handler), closed when
// the test ends, and its statement log, which s.Log keeps too.
func (s *Server) Open(t testing.TB) (*sql.DB, *fakesql.Log) {
	t.Helper()
	db, log := fakesql.Open(s.Handler)
	t.Cleanup(func() { _ = db.Close() })
	s.Mu.Lock()
	s.Log = log
	s.Mu.Unlock()
	return db, log
}

// Ctx is a context for one test step, cancelled after 30 seconds or when
// the test ends.
func Ctx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// Pin takes a connection of db for the rest of the test.
func Pin(t testing.TB, db *sql.DB) *sql.Conn {
	t.Helper()
	c, err := db.Conn(Ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// OneRow is a result of one row of one column.
func OneRow(col string, v any) fakesql.Response {
	return fakesql.Response{Columns: []string{col}, Rows: [][]any{{v}}}
}

// Args reads bound values as the drivers receive them.
type Args []driver.NamedValue

// Str is the string bound at i, or "".
func (a Args) Str(i int) string {
	if i >= len(a) {
		return ""
	}
	s, _ := a[i].Value.(string)
	return s
}

// Int is the integer bound at i, or 0.
func (a Args) Int(i int) int64 {
	if i >= len(a) {
		return 0
	}
	switch v := a[i].Value.(type) {
	case int64:
		return v
	case int:
		return int64(v)
	}
	return 0
}

// SetOut stores v in the sql.Out bound at i, as the drivers fill OUT
// binds.
func (a Args) SetOut(i int, v int64) {
	if i >= len(a) {
		return
	}
	out, ok := a[i].Value.(sql.Out)
	if !ok {
		return
	}
	if p, ok := out.Dest.(*int64); ok {
		*p = v
	}
}
