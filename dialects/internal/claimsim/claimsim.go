// Package claimsim runs the batch-finish statements the claim builders
// write (claimtable.Finisher) on an in-memory task table, evaluating their
// conditions and assignments with leasesim's expression language, so a
// statement whose owner, version or status check is turned around, or
// whose retries comparison is flipped, changes the wrong rows here as on a
// server, and CheckFinish fails — for the dialects without a server on
// this machine (SQL Server, Oracle, Dameng, the PostgreSQL family's
// products) and offline for the others. A simulator that matched the text
// of a golden file would accept any statement the file was regenerated
// with.
//
// It knows the two shapes the builders write, each optionally ending in
// ";":
//
//	UPDATE table SET … [OUTPUT inserted.id] WHERE … [RETURNING id]
//	SELECT id FROM table WHERE … FOR UPDATE
//
// It is a test-only package: only tests import it.
package claimsim

import (
	"database/sql/driver"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/schedlock/schedlock/dialects/internal/leasesim"
	"github.com/schedlock/schedlock/internal/fakesql"
)

// Dialect is what the simulator needs of a dialect's SQL beside the
// expression language.
type Dialect struct {
	// Clock are the texts of the dialect's database clock in the
	// statements (its Now), read as the simulator's now.
	Clock []string
	// Env resolves the dialect's own names and functions (UTC_TIMESTAMP,
	// TIMESTAMPADD's unit, …); its Placeholder is filled in by the
	// simulator. Zero: none.
	Env leasesim.Env
	// Sequential makes a SET assign from left to right, each expression
	// seeing the columns assigned before it (MySQL's single-table UPDATE);
	// otherwise every expression reads the row as it was.
	Sequential bool
	// LastInsertID gives the statements MySQL's LAST_INSERT_ID() and
	// LAST_INSERT_ID(expr), per session, reported as the last insert id.
	LastInsertID bool
}

// Row is one task row: column (lower case) → value (nil, int64, string,
// time.Time).
type Row map[string]any

// Table is the simulated task table, a fakesql.Handler.
type Table struct {
	Name string
	ID   string // the id column, lower case
	D    Dialect
	Now  time.Time

	mu   sync.Mutex
	Rows map[int64]Row
}

// Close implements fakesql.Handler.
func (*Table) Close(*fakesql.Session) {}

// Handle implements fakesql.Handler.
func (t *Table) Handle(s *fakesql.Session, q string, args []driver.NamedValue) (fakesql.Response, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	sql := strings.TrimSuffix(strings.TrimSpace(q), ";")
	for _, c := range sortedLongestFirst(t.D.Clock) {
		sql = strings.ReplaceAll(sql, c, "SIM_NOW")
	}
	sql = leasesim.NumberMarks(sql)
	verb := strings.ToUpper(strings.Fields(sql + " x")[0])
	switch verb {
	case "UPDATE":
		return t.update(s, sql, args)
	case "SELECT":
		return t.selectLocked(sql, args)
	}
	return fakesql.Response{}, fmt.Errorf("claimsim: no statement it knows: %q", q)
}

func sortedLongestFirst(in []string) []string {
	out := slices.Clone(in)
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

// env is the statement's Env for row r.
func (t *Table) env(s *fakesql.Session, r Row, args []driver.NamedValue, lastID *int64, set *bool) leasesim.Env {
	e := t.D.Env
	ident := e.Ident
	e.Ident = func(name string) (any, bool) {
		key := strings.ToLower(name)
		if i := strings.LastIndexByte(key, '.'); i >= 0 {
			key = key[i+1:]
		}
		if v, ok := r[key]; ok {
			return v, true
		}
		if name == "SIM_NOW" {
			return t.Now, true
		}
		if ident != nil {
			return ident(name)
		}
		return nil, false
	}
	e.Placeholder = leasesim.Bound(args)
	fn := e.Func
	e.Func = func(name string, vals []any) (any, bool, error) {
		if t.D.LastInsertID && name == "LAST_INSERT_ID" {
			switch len(vals) {
			case 0:
				return *lastID, true, nil
			case 1:
				v, ok := vals[0].(int64)
				if !ok {
					return nil, true, fmt.Errorf("LAST_INSERT_ID(%T)", vals[0])
				}
				*lastID, *set = v, true
				return v, true, nil
			}
		}
		if fn != nil {
			return fn(name, vals)
		}
		return nil, false, nil
	}
	return e
}

// update runs UPDATE table SET … [OUTPUT inserted.id] WHERE … [RETURNING id].
func (t *Table) update(s *fakesql.Session, sql string, args []driver.NamedValue) (fakesql.Response, error) {
	fields := strings.Fields(sql)
	if len(fields) < 3 || !strings.EqualFold(fields[1], t.Name) || !strings.EqualFold(fields[2], "SET") {
		return fakesql.Response{}, fmt.Errorf("claimsim: not an UPDATE of %s: %q", t.Name, sql)
	}
	set, _ := leasesim.Clause(sql, "SET", "OUTPUT", "WHERE")
	where, ok := leasesim.Clause(sql, "WHERE", "RETURNING")
	if !ok {
		return fakesql.Response{}, fmt.Errorf("claimsim: an UPDATE without WHERE: %q", sql)
	}
	output, hasOutput := leasesim.Clause(sql, "OUTPUT", "WHERE")
	returning, hasReturning := leasesim.Clause(sql, "RETURNING")
	switch {
	case hasOutput && !strings.EqualFold(output, "inserted."+t.ID):
		return fakesql.Response{}, fmt.Errorf("claimsim: OUTPUT %s: only inserted.%s", output, t.ID)
	case hasReturning && !strings.EqualFold(returning, t.ID):
		return fakesql.Response{}, fmt.Errorf("claimsim: RETURNING %s: only %s", returning, t.ID)
	}
	assigns, err := leasesim.Assignments(set)
	if err != nil {
		return fakesql.Response{}, err
	}
	var lastID int64
	if v, ok := s.Values["last_insert_id"].(int64); ok {
		lastID = v
	}
	var setID bool
	resp := fakesql.Response{Columns: []string{t.ID}}
	for _, id := range t.ids() {
		old := t.Rows[id]
		match, err := leasesim.Eval(where, t.env(s, old, args, &lastID, &setID))
		if err != nil {
			return fakesql.Response{}, fmt.Errorf("claimsim: WHERE %s: %w", where, err)
		}
		if match != true {
			continue
		}
		next := Row{}
		for k, v := range old {
			next[k] = v
		}
		for _, a := range assigns {
			from := old
			if t.D.Sequential {
				from = next
			}
			v, err := leasesim.Eval(a.Expr, t.env(s, from, args, &lastID, &setID))
			if err != nil {
				return fakesql.Response{}, fmt.Errorf("claimsim: SET %s = %s: %w", a.Column, a.Expr, err)
			}
			key := strings.ToLower(a.Column)
			if _, ok := old[key]; !ok {
				return fakesql.Response{}, fmt.Errorf("claimsim: SET of %s, which the table lacks", a.Column)
			}
			next[key] = v
		}
		t.Rows[id] = next
		resp.RowsAffected++
		resp.Rows = append(resp.Rows, []any{id})
	}
	if s.Values == nil {
		s.Values = map[string]any{}
	}
	s.Values["last_insert_id"] = lastID
	if setID {
		resp.LastInsertID = lastID
	}
	if !hasOutput && !hasReturning {
		resp.Columns, resp.Rows = nil, nil
	}
	return resp, nil
}

// selectLocked runs SELECT id FROM table WHERE … FOR UPDATE.
func (t *Table) selectLocked(sql string, args []driver.NamedValue) (fakesql.Response, error) {
	cols, _ := leasesim.Clause(sql, "SELECT", "FROM")
	from, _ := leasesim.Clause(sql, "FROM", "WHERE")
	where, ok := leasesim.Clause(sql, "WHERE", "FOR UPDATE")
	if !ok || !strings.EqualFold(cols, t.ID) || !strings.EqualFold(from, t.Name) || !strings.HasSuffix(sql, " FOR UPDATE") {
		return fakesql.Response{}, fmt.Errorf("claimsim: not SELECT %s FROM %s WHERE … FOR UPDATE: %q", t.ID, t.Name, sql)
	}
	resp := fakesql.Response{Columns: []string{t.ID}}
	var lastID int64
	var setID bool
	for _, id := range t.ids() {
		match, err := leasesim.Eval(where, t.env(nil, t.Rows[id], args, &lastID, &setID))
		if err != nil {
			return fakesql.Response{}, fmt.Errorf("claimsim: WHERE %s: %w", where, err)
		}
		if match == true {
			resp.Rows = append(resp.Rows, []any{id})
		}
	}
	return resp, nil
}

func (t *Table) ids() []int64 {
	ids := make([]int64, 0, len(t.Rows))
	for id := range t.Rows {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

var _ fakesql.Handler = (*Table)(nil)
