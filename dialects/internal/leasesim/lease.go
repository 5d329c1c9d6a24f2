package leasesim

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// Row is one row of a lease table: the name, the owner, the token (0 on
// a table without one) and the lease's start and end, in UTC whatever
// zone the table's columns are written in.
type Row struct {
	Name, Owner     string
	LockedAt, Until time.Time
	Token           int64
}

// Table is a lease table's rows, by the key the simulator compares names
// with (the name itself, or its collation key).
type Table struct {
	Schema dialects.Schema
	Rows   map[string]*Row
}

// column is the value of the column col of r as the table holds it: times
// in the writer time zone's wall clock when the schema has one.
func (t *Table) column(r *Row, col string) (any, bool) {
	s := t.Schema
	switch {
	case strings.EqualFold(col, s.NameCol):
		return r.Name, true
	case strings.EqualFold(col, s.OwnerCol):
		return r.Owner, true
	case strings.EqualFold(col, s.LockedAtCol):
		return dialects.UTCToWall(r.LockedAt, s.Location()), true
	case strings.EqualFold(col, s.UntilCol):
		return dialects.UTCToWall(r.Until, s.Location()), true
	case s.TokenCol != "" && strings.EqualFold(col, s.TokenCol):
		return r.Token, true
	}
	return nil, false
}

// set stores v in the column col of r.
func (t *Table) set(r *Row, col string, v any) error {
	s := t.Schema
	switch {
	case strings.EqualFold(col, s.NameCol), strings.EqualFold(col, s.OwnerCol):
		str, ok := v.(string)
		if !ok {
			return fmt.Errorf("leasesim: %s = %T", col, v)
		}
		if strings.EqualFold(col, s.NameCol) {
			r.Name = str
		} else {
			r.Owner = str
		}
	case strings.EqualFold(col, s.LockedAtCol), strings.EqualFold(col, s.UntilCol):
		ts, ok := v.(time.Time)
		if !ok {
			return fmt.Errorf("leasesim: %s = %T", col, v)
		}
		ts = dialects.WallToUTC(ts, s.Location())
		if strings.EqualFold(col, s.UntilCol) {
			r.Until = ts
		} else {
			r.LockedAt = ts
		}
	case s.TokenCol != "" && strings.EqualFold(col, s.TokenCol):
		switch n := v.(type) {
		case int64:
			r.Token = n
		case float64:
			r.Token = int64(n)
		default:
			return fmt.Errorf("leasesim: %s = %T", col, v)
		}
	default:
		return fmt.Errorf("leasesim: %s is no column of %s", col, s.Table)
	}
	return nil
}

// rowEnv is env with the columns of r in front: plain, qualified by one
// of aliases (the target's alias, "inserted" or "deleted" of an OUTPUT) or
// by the table's name. Names qualified by source (a MERGE source, an
// upsert's EXCLUDED, whatever the case) read src, keyed by lower-case
// column name; a nil r has no columns (a row still to insert).
func (t *Table) rowEnv(env Env, r *Row, aliases []string, source string, src map[string]any) Env {
	outer := env.Ident
	env.Ident = func(name string) (any, bool) {
		q, col, qualified := strings.Cut(name, ".")
		if !qualified {
			col = q
		}
		switch {
		case qualified && source != "" && strings.EqualFold(q, source):
			v, ok := src[strings.ToLower(col)]
			return v, ok
		case !qualified || strings.EqualFold(q, t.Schema.Table) || slices.Contains(aliases, q):
			if r != nil {
				if v, ok := t.column(r, col); ok {
					return v, true
				}
			}
		}
		if outer != nil {
			return outer(name)
		}
		return nil, false
	}
	return env
}

// keys is the table's keys in order, so statements visit rows in a
// stable order.
func (t *Table) keys() []string {
	out := make([]string, 0, len(t.Rows))
	for k := range t.Rows {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// assign evaluates every assignment against r's values before any of
// them (as SQL does), then stores them.
func (t *Table) assign(r *Row, sets []Assignment, env Env) error {
	vals := make([]any, len(sets))
	for i, a := range sets {
		v, err := Eval(a.Expr, env)
		if err != nil {
			return err
		}
		vals[i] = v
	}
	for i, a := range sets {
		if err := t.set(r, a.Column, vals[i]); err != nil {
			return err
		}
	}
	return nil
}

// Update runs "UPDATE table [[AS] t] SET … WHERE …" (any UPDATE form
// Exec knows) on every row the WHERE holds for, and returns how many it
// changed.
func (t *Table) Update(sql string, env Env) (int64, error) {
	return t.execVerb("UPDATE", sql, env)
}

// Delete removes every row for which the WHERE of "DELETE FROM table
// WHERE …" (any DELETE form Exec knows) holds, and returns how many.
func (t *Table) Delete(sql string, env Env) (int64, error) {
	return t.execVerb("DELETE", sql, env)
}

// execVerb runs sql, which must be a verb statement, and returns its
// row count.
func (t *Table) execVerb(verb, sql string, env Env) (int64, error) {
	if f := strings.Fields(sql); len(f) == 0 || !strings.EqualFold(f[0], verb) {
		return 0, fmt.Errorf("leasesim: no %s: %q", verb, sql)
	}
	res, err := t.Exec(sql, env)
	if err != nil {
		return 0, err
	}
	return res.Affected(), nil
}

// Merge is the outcome of a MERGE's matching and update: Matched when a
// row met the ON condition, Updated how many of those its WHEN MATCHED
// branch changed, and Insert the row its WHEN NOT MATCHED branch would
// insert (nil when a row matched); the caller inserts it, so it can play
// a concurrent insert of the same name.
type Merge struct {
	Matched bool
	Updated int64
	Insert  *Row
	// Rows are the rows the WHEN MATCHED branch changed, as they are now.
	Rows []*Row
}

// Merge runs the Oracle-form MERGE
//
//	MERGE INTO table t USING (SELECT e AS a, … FROM dual) s ON (cond)
//	WHEN MATCHED THEN UPDATE SET … [WHERE cond]
//	WHEN NOT MATCHED THEN INSERT (cols) VALUES (vals)
//
// and the SQL Server form (USING (SELECT …) AS src, WHEN MATCHED AND cond
// THEN UPDATE SET …). The source's values are evaluated once with env.
func (t *Table) Merge(sql string, env Env) (Merge, error) {
	sql = NumberMarks(sql)
	using, ok := Clause(sql, "USING", "ON")
	if !ok {
		return Merge{}, fmt.Errorf("leasesim: no USING in %q", sql)
	}
	close := strings.LastIndexByte(using, ')')
	if !strings.HasPrefix(using, "(") || close < 0 {
		return Merge{}, fmt.Errorf("leasesim: USING is no subquery: %q", using)
	}
	source := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(using[close+1:]), "AS "))
	src, err := t.sourceValues(using[1:close], env)
	if err != nil {
		return Merge{}, err
	}
	on, _ := Clause(sql, "ON", "WHEN")
	matched, _ := Clause(sql, "WHEN MATCHED", "WHEN NOT MATCHED")
	var guard string
	if rest, ok := strings.CutPrefix(matched, "AND "); ok {
		g, set, found := strings.Cut(rest, " THEN UPDATE SET ")
		if !found {
			return Merge{}, fmt.Errorf("leasesim: WHEN MATCHED %q", matched)
		}
		guard, matched = g, "THEN UPDATE SET "+set
	}
	set, ok := Clause(matched, "THEN UPDATE SET", "WHERE")
	if !ok {
		return Merge{}, fmt.Errorf("leasesim: WHEN MATCHED has no UPDATE: %q", matched)
	}
	if w, ok := Clause(matched, "WHERE"); ok {
		if guard != "" {
			return Merge{}, fmt.Errorf("leasesim: WHEN MATCHED with two conditions: %q", matched)
		}
		guard = w
	}
	sets, err := Assignments(set)
	if err != nil {
		return Merge{}, err
	}
	var res Merge
	for _, k := range t.keys() {
		r := t.Rows[k]
		renv := t.rowEnv(env, r, []string{"t"}, source, src)
		hit, err := Cond(on, renv)
		if err != nil {
			return Merge{}, err
		}
		if !hit {
			continue
		}
		res.Matched = true
		if guard != "" {
			if ok, err := Cond(guard, renv); err != nil || !ok {
				if err != nil {
					return Merge{}, err
				}
				continue
			}
		}
		if err := t.assign(r, sets, renv); err != nil {
			return Merge{}, err
		}
		res.Updated++
		res.Rows = append(res.Rows, r)
	}
	if res.Matched {
		return res, nil
	}
	insert, ok := Clause(sql, "WHEN NOT MATCHED THEN INSERT", "OUTPUT", ";")
	if !ok {
		return res, nil
	}
	cols, vals, found := strings.Cut(insert, " VALUES ")
	if !found {
		return Merge{}, fmt.Errorf("leasesim: INSERT without VALUES: %q", insert)
	}
	cl := Split(strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(cols), "("), ")"), ',')
	vl := Split(strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(vals), "("), ")"), ',')
	if len(cl) != len(vl) {
		return Merge{}, fmt.Errorf("leasesim: INSERT of %d columns with %d values: %q", len(cl), len(vl), insert)
	}
	r := &Row{}
	renv := t.rowEnv(env, nil, []string{"t"}, source, src)
	sets = sets[:0]
	for i := range cl {
		sets = append(sets, Assignment{Column: cl[i], Expr: vl[i]})
	}
	if err := t.assign(r, sets, renv); err != nil {
		return Merge{}, err
	}
	res.Insert = r
	return res, nil
}

// sourceValues evaluates a MERGE source "SELECT e AS a, … [FROM …]",
// keyed by lower-case alias; a FROM of derived tables ("(SELECT …) AS n",
// SQL Server's clock reading) is evaluated first, so the list may read
// their columns. Any other FROM (Oracle's dual) adds nothing.
func (t *Table) sourceValues(sel string, env Env) (map[string]any, error) {
	list, ok := Clause(sel, "SELECT", "FROM")
	if !ok {
		return nil, fmt.Errorf("leasesim: source %q is no SELECT", sel)
	}
	if from, ok := Clause(sel, "FROM"); ok && strings.HasPrefix(from, "(") {
		var err error
		if _, _, env, err = joinEnv(from, env); err != nil {
			return nil, err
		}
	}
	return selectValues(list, env)
}

// selectValues evaluates a SELECT list of named items (see Aliases),
// keyed by lower-case alias.
func selectValues(list string, env Env) (map[string]any, error) {
	aliases, err := Aliases(list)
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	for a, e := range aliases {
		v, err := Eval(e, env)
		if err != nil {
			return nil, err
		}
		out[strings.ToLower(a)] = v
	}
	return out, nil
}
