package leasesim

import (
	"fmt"
	"strings"
)

// Result is what a write statement run by Exec did to a lease table.
type Result struct {
	// Matched is true when a row met the statement's match: the ON of a
	// MERGE, the conflict target of an upsert, the WHERE of an UPDATE or
	// DELETE.
	Matched bool
	// Rows are the rows the statement changed, as they are now, or
	// deleted, as they were, in key order.
	Rows []*Row
	// Insert is the row the statement's insert branch (MERGE's WHEN NOT
	// MATCHED, an upsert's INSERT) adds when no row matched. The caller
	// stores it under the key it compares names by, so it can play a
	// concurrent insert of the same name first.
	Insert *Row
	// Output is the statement's OUTPUT or RETURNING expression, "" when it
	// has none; Table.Output evaluates it for a row.
	Output string
	// aliases are the names the Output expression reads the row under.
	aliases []string
}

// Affected is the statement's row count: the rows it changed or deleted,
// plus the one it inserts.
func (r Result) Affected() int64 {
	n := int64(len(r.Rows))
	if r.Insert != nil {
		n++
	}
	return n
}

// Exec runs one write statement on t from its text, with every condition
// and assignment evaluated by the expression language (see Eval). It
// knows these forms, each optionally ending in ";":
//
//	UPDATE table [[AS] t] SET … WHERE … [RETURNING e]
//	UPDATE table [AS t] SET … FROM (SELECT unnest($n::type[]) AS a, …) AS b WHERE … [RETURNING e]
//	UPDATE t SET … OUTPUT e FROM table AS t CROSS JOIN (SELECT … AS now) AS n WHERE …
//	DELETE FROM table [[AS] t] WHERE … [RETURNING e]
//	DELETE t OUTPUT e FROM table AS t CROSS JOIN (SELECT … AS now) AS n WHERE …
//	MERGE … (see Table.Merge), with SQL Server's OUTPUT e
//	INSERT INTO table [AS t] (cols) {SELECT … [FROM (SELECT …) AS n] | VALUES (…)}
//	  {ON CONFLICT (col) DO UPDATE SET … | ON DUPLICATE KEY UPDATE …} [WHERE …] [RETURNING e]
//
// A statement on another table than t's, or one it cannot read, is an
// error. Derived tables in a FROM ("(SELECT e AS now) AS n") are
// evaluated once, before any row, as the database reads its clock once
// per statement.
func (t *Table) Exec(sql string, env Env) (Result, error) {
	sql = strings.TrimSuffix(strings.TrimSpace(NumberMarks(sql)), ";")
	verb := ""
	if f := strings.Fields(sql); len(f) > 0 {
		verb = strings.ToUpper(f[0])
	}
	switch verb {
	case "UPDATE":
		return t.execUpdate(sql, env)
	case "DELETE":
		return t.execDelete(sql, env)
	case "INSERT":
		return t.execUpsert(sql, env)
	case "MERGE":
		if err := t.target(sql); err != nil {
			return Result{}, err
		}
		m, err := t.Merge(sql, env)
		if err != nil {
			return Result{}, err
		}
		out, _ := Clause(sql, "OUTPUT")
		return Result{Matched: m.Matched, Rows: m.Rows, Insert: m.Insert, Output: out, aliases: []string{"inserted", "t"}}, nil
	}
	return Result{}, fmt.Errorf("leasesim: no write statement: %q", sql)
}

// Output evaluates res.Output for the row r (one of res.Rows, or
// res.Insert once stored) with env; nil when the statement has no OUTPUT
// or RETURNING.
func (t *Table) Output(res Result, r *Row, env Env) (any, error) {
	if res.Output == "" {
		return nil, nil
	}
	return Eval(res.Output, t.rowEnv(env, r, res.aliases, "", nil))
}

// Target is the table a write statement (one Exec knows) writes to, as
// the statement names it.
func Target(sql string) (string, error) {
	sql = strings.TrimSuffix(strings.TrimSpace(sql), ";")
	f := strings.Fields(sql)
	if len(f) == 0 {
		return "", fmt.Errorf("leasesim: empty statement")
	}
	switch strings.ToUpper(f[0]) {
	case "UPDATE", "DELETE":
		if from, ok := Clause(sql, "FROM", "WHERE", "RETURNING"); ok {
			for _, item := range joinItems(from) {
				if !strings.HasPrefix(item, "(") {
					name, _, err := tableAlias(item)
					return name, err
				}
			}
			return "", fmt.Errorf("leasesim: no table in FROM %q", from)
		}
		target, _ := Clause(sql, "UPDATE", "SET")
		name, _, err := tableAlias(target)
		return name, err
	case "INSERT":
		into, _, ok := strings.Cut(sql, "(")
		rest, found := strings.CutPrefix(strings.TrimSpace(into), f[0])
		if !ok || !found {
			return "", fmt.Errorf("leasesim: INSERT without columns: %q", sql)
		}
		rest = strings.TrimSpace(rest)
		if len(rest) < 5 || !strings.EqualFold(rest[:5], "INTO ") {
			return "", fmt.Errorf("leasesim: INSERT without INTO: %q", sql)
		}
		name, _, err := tableAlias(rest[5:])
		return name, err
	case "MERGE":
		into, ok := Clause(sql, "INTO", "USING")
		if f := strings.Fields(into); ok && len(f) > 0 {
			return f[0], nil
		}
	}
	return "", fmt.Errorf("leasesim: no table in %q", sql)
}

// target checks that sql writes to t.
func (t *Table) target(sql string) error {
	name, err := Target(sql)
	if err != nil {
		return err
	}
	if !strings.EqualFold(name, t.Schema.Table) {
		return fmt.Errorf("leasesim: the statement writes to %s, not %s", name, t.Schema.Table)
	}
	return nil
}

func (t *Table) execUpdate(sql string, env Env) (Result, error) {
	if from, ok := Clause(sql, "FROM", "WHERE", "RETURNING"); ok {
		source, src, isUnnest, err := unnestSource(from, env)
		if err != nil {
			return Result{}, err
		}
		if isUnnest {
			i := find(sql, "FROM", 0)
			return t.execUpdateJoin(sql[:i]+sql[i+len("FROM")+strings.Index(sql[i+len("FROM"):], from)+len(from):], source, src, env)
		}
	}
	if err := t.target(sql); err != nil {
		return Result{}, err
	}
	set, ok := Clause(sql, "SET", "OUTPUT", "FROM", "WHERE", "RETURNING")
	if !ok {
		return Result{}, fmt.Errorf("leasesim: no SET in %q", sql)
	}
	where, ok := Clause(sql, "WHERE", "RETURNING")
	if !ok {
		return Result{}, fmt.Errorf("leasesim: no WHERE in %q", sql)
	}
	res, alias, env, err := t.outputAndRows(sql, "UPDATE", "SET", env)
	if err != nil {
		return Result{}, err
	}
	sets, err := Assignments(set)
	if err != nil {
		return Result{}, err
	}
	for _, k := range t.keys() {
		r := t.Rows[k]
		renv := t.rowEnv(env, r, alias, "", nil)
		hit, err := Cond(where, renv)
		if err != nil {
			return Result{}, err
		}
		if !hit {
			continue
		}
		if err := t.assign(r, sets, renv); err != nil {
			return Result{}, err
		}
		res.Rows = append(res.Rows, r)
	}
	res.Matched = len(res.Rows) > 0
	return res, nil
}

func (t *Table) execDelete(sql string, env Env) (Result, error) {
	if err := t.target(sql); err != nil {
		return Result{}, err
	}
	where, ok := Clause(sql, "WHERE", "RETURNING")
	if !ok {
		return Result{}, fmt.Errorf("leasesim: no WHERE in %q", sql)
	}
	res, alias, env, err := t.outputAndRows(sql, "DELETE", "FROM", env)
	if err != nil {
		return Result{}, err
	}
	res.aliases = append(res.aliases, "deleted")
	for _, k := range t.keys() {
		r := t.Rows[k]
		hit, err := Cond(where, t.rowEnv(env, r, alias, "", nil))
		if err != nil {
			return Result{}, err
		}
		if hit {
			delete(t.Rows, k)
			res.Rows = append(res.Rows, r)
		}
	}
	res.Matched = len(res.Rows) > 0
	return res, nil
}

// outputAndRows reads what UPDATE and DELETE share: the target's alias
// (between verb and next, or in a FROM list with derived tables, which
// env then resolves), and the OUTPUT or RETURNING expression.
func (t *Table) outputAndRows(sql, verb, next string, env Env) (Result, []string, Env, error) {
	var res Result
	var aliases []string
	if out, ok := Clause(sql, "OUTPUT", "FROM", "WHERE"); ok {
		res.Output = out
		res.aliases = []string{"inserted"}
	}
	if ret, ok := Clause(sql, "RETURNING"); ok {
		res.Output = ret
	}
	target, _ := Clause(sql, verb, next, "OUTPUT")
	from, hasFrom := Clause(sql, "FROM", "WHERE", "RETURNING")
	switch {
	case hasFrom && verb == "DELETE" && target == "":
		// DELETE FROM table [AS t]: the FROM is the target.
		_, alias, err := tableAlias(from)
		if err != nil {
			return Result{}, nil, env, err
		}
		if alias != "" {
			aliases = append(aliases, alias)
		}
	case hasFrom:
		// SQL Server: the target names the alias of the FROM's table.
		_, alias, jenv, err := joinEnv(from, env)
		if err != nil {
			return Result{}, nil, env, err
		}
		if alias == "" || !strings.EqualFold(target, alias) {
			return Result{}, nil, env, fmt.Errorf("leasesim: %s %s is not the FROM's table alias %q", verb, target, alias)
		}
		env = jenv
		aliases = append(aliases, alias)
	default:
		_, alias, err := tableAlias(target)
		if err != nil {
			return Result{}, nil, env, err
		}
		if alias != "" {
			aliases = append(aliases, alias)
		}
	}
	res.aliases = append(res.aliases, aliases...)
	return res, aliases, env, nil
}

// execUpsert runs INSERT … ON CONFLICT (col) DO UPDATE and INSERT … ON
// DUPLICATE KEY UPDATE (on the name, the table's key).
func (t *Table) execUpsert(sql string, env Env) (Result, error) {
	if err := t.target(sql); err != nil {
		return Result{}, err
	}
	open := strings.IndexByte(sql, '(')
	head := sql[:open]
	_, alias, err := tableAlias(strings.TrimSpace(head[strings.Index(strings.ToUpper(head), "INTO ")+len("INTO "):]))
	if err != nil {
		return Result{}, err
	}
	closing := matchParen(sql, open)
	if closing < 0 {
		return Result{}, fmt.Errorf("leasesim: unbalanced column list in %q", sql)
	}
	cols := Split(sql[open+1:closing], ',')
	rest := strings.TrimSpace(sql[closing+1:])
	onAt := find(rest, "ON", 0)
	if onAt < 0 {
		return Result{}, fmt.Errorf("leasesim: INSERT without ON CONFLICT or ON DUPLICATE KEY UPDATE: %q", sql)
	}
	source, conflict := strings.TrimSpace(rest[:onAt]), rest[onAt:]
	var exprs []string
	srcEnv := env
	switch {
	case strings.HasPrefix(strings.ToUpper(source), "VALUES"):
		vals := strings.TrimSpace(source[len("VALUES"):])
		if !strings.HasPrefix(vals, "(") || matchParen(vals, 0) != len(vals)-1 {
			return Result{}, fmt.Errorf("leasesim: VALUES of one row expected: %q", source)
		}
		exprs = Split(vals[1:len(vals)-1], ',')
	case strings.HasPrefix(strings.ToUpper(source), "SELECT"):
		list, _ := Clause(source, "SELECT", "FROM")
		exprs = Split(list, ',')
		if from, ok := Clause(source, "FROM"); ok {
			table, _, jenv, err := joinEnv(from, env)
			if err != nil {
				return Result{}, err
			}
			if table != "" {
				return Result{}, fmt.Errorf("leasesim: INSERT … SELECT from a table: %q", source)
			}
			srcEnv = jenv
		}
	default:
		return Result{}, fmt.Errorf("leasesim: INSERT source %q", source)
	}
	if len(exprs) != len(cols) {
		return Result{}, fmt.Errorf("leasesim: INSERT of %d columns with %d values: %q", len(cols), len(exprs), sql)
	}
	proposed := map[string]any{}
	insert := &Row{}
	for i, col := range cols {
		v, err := Eval(exprs[i], srcEnv)
		if err != nil {
			return Result{}, err
		}
		proposed[strings.ToLower(col)] = v
		if err := t.set(insert, col, v); err != nil {
			return Result{}, err
		}
	}
	var key, set, where string
	switch {
	case strings.HasPrefix(conflict, "ON CONFLICT"):
		c := strings.TrimSpace(strings.TrimPrefix(conflict, "ON CONFLICT"))
		end := matchParen(c, 0)
		if !strings.HasPrefix(c, "(") || end < 0 {
			return Result{}, fmt.Errorf("leasesim: ON CONFLICT without a target: %q", conflict)
		}
		key = strings.TrimSpace(c[1:end])
		var ok bool
		if set, ok = Clause(c[end+1:], "DO UPDATE SET", "WHERE", "RETURNING"); !ok {
			return Result{}, fmt.Errorf("leasesim: ON CONFLICT without DO UPDATE SET: %q", conflict)
		}
		where, _ = Clause(c[end+1:], "WHERE", "RETURNING")
	case strings.HasPrefix(conflict, "ON DUPLICATE KEY UPDATE"):
		key = t.Schema.NameCol // the primary key
		set, _ = Clause(conflict, "ON DUPLICATE KEY UPDATE", "WHERE", "RETURNING")
		where, _ = Clause(conflict, "WHERE", "RETURNING")
	default:
		return Result{}, fmt.Errorf("leasesim: INSERT with %q", conflict)
	}
	if !strings.EqualFold(key, t.Schema.NameCol) {
		return Result{}, fmt.Errorf("leasesim: conflict on %s, not the key %s", key, t.Schema.NameCol)
	}
	sets, err := Assignments(set)
	if err != nil {
		return Result{}, err
	}
	res := Result{aliases: []string{alias}}
	if ret, ok := Clause(conflict, "RETURNING"); ok {
		res.Output = ret
	}
	name, ok := proposed[strings.ToLower(t.Schema.NameCol)]
	if !ok || name == nil {
		return Result{}, fmt.Errorf("leasesim: INSERT without the key %s", t.Schema.NameCol)
	}
	p := &parser{env: env}
	for _, k := range t.keys() {
		r := t.Rows[k]
		c, err := p.compare(r.Name, name)
		if err != nil {
			return Result{}, err
		}
		if c != 0 {
			continue
		}
		res.Matched = true
		renv := t.rowEnv(env, r, []string{alias}, "EXCLUDED", proposed)
		if where != "" {
			hit, err := Cond(where, renv)
			if err != nil {
				return Result{}, err
			}
			if !hit {
				return res, nil
			}
		}
		if err := t.assign(r, sets, renv); err != nil {
			return Result{}, err
		}
		res.Rows = append(res.Rows, r)
		return res, nil
	}
	res.Insert = insert
	return res, nil
}

// joinEnv reads a FROM list: at most one table ("name [[AS] alias]") and
// derived tables "(SELECT e AS a, …) [AS] n" without a FROM of their own
// (a clock reading), joined by CROSS JOIN or commas. It returns the table
// and its alias ("" for none) and env with the derived tables' columns
// (n.a) resolved, each evaluated once.
func joinEnv(from string, env Env) (table, alias string, _ Env, _ error) {
	derived := map[string]map[string]any{}
	for _, item := range joinItems(from) {
		if !strings.HasPrefix(item, "(") {
			if table != "" {
				return "", "", env, fmt.Errorf("leasesim: two tables in FROM %q", from)
			}
			var err error
			if table, alias, err = tableAlias(item); err != nil {
				return "", "", env, err
			}
			continue
		}
		end := matchParen(item, 0)
		if end < 0 {
			return "", "", env, fmt.Errorf("leasesim: unbalanced %q", item)
		}
		sub := strings.TrimSpace(item[1:end])
		name := strings.TrimSpace(item[end+1:])
		if rest, ok := strings.CutPrefix(strings.ToUpper(name), "AS "); ok {
			name = strings.TrimSpace(name[len(name)-len(rest):])
		}
		list, ok := Clause(sub, "SELECT", "FROM")
		if _, hasFrom := Clause(sub, "FROM"); !ok || hasFrom || name == "" || strings.ContainsAny(name, " ()") {
			return "", "", env, fmt.Errorf("leasesim: derived table %q is not (SELECT e AS a, …) AS n", item)
		}
		vals, err := selectValues(list, env)
		if err != nil {
			return "", "", env, err
		}
		derived[strings.ToLower(name)] = vals
	}
	if len(derived) > 0 {
		outer := env.Ident
		env.Ident = func(name string) (any, bool) {
			if q, col, ok := strings.Cut(name, "."); ok {
				if vals, ok := derived[strings.ToLower(q)]; ok {
					v, ok := vals[strings.ToLower(col)]
					return v, ok
				}
			}
			if outer != nil {
				return outer(name)
			}
			return nil, false
		}
	}
	return table, alias, env, nil
}

// joinItems cuts a FROM list at its top-level commas and CROSS JOINs.
func joinItems(from string) []string {
	var out []string
	for _, part := range Split(from, ',') {
		for {
			i := find(part, "CROSS JOIN", 0)
			if i < 0 {
				break
			}
			out = append(out, strings.TrimSpace(part[:i]))
			part = part[i+len("CROSS JOIN"):]
		}
		out = append(out, strings.TrimSpace(part))
	}
	return out
}

// tableAlias reads "name", "name alias" or "name AS alias".
func tableAlias(s string) (name, alias string, _ error) {
	f := strings.Fields(s)
	if len(f) == 3 && strings.EqualFold(f[1], "AS") {
		f = []string{f[0], f[2]}
	}
	switch len(f) {
	case 1:
		return f[0], "", nil
	case 2:
		return f[0], f[1], nil
	}
	return "", "", fmt.Errorf("leasesim: %q is no table with an alias", s)
}

// matchParen is the index of the parenthesis that closes the one at open
// in s (outside string literals), or -1.
func matchParen(s string, open int) int {
	depth, quoted := 0, false
	for i := open; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\'':
			quoted = !quoted
		case quoted:
		case c == '(':
			depth++
		case c == ')':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}
