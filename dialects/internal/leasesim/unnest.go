package leasesim

import (
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"
)

// unnestItem is one column of a derived table of zipped unnest() calls:
// unnest($1::text[]) AS name.
var unnestItem = regexp.MustCompile(`(?i)^unnest\(\$(\d+)::[a-z]+\[\]\)\s+AS\s+([a-z_][a-z0-9_]*)$`)

// unnestSource reads a FROM of one derived table of zipped unnest() calls
// over bound arrays — PostgreSQL's way to join a batch of values:
//
//	(SELECT unnest($1::text[]) AS name, unnest($4::bigint[]) AS token) AS b
//
// It returns the derived table's alias and its rows (the arrays zipped,
// one row per index); ok is false for any other FROM.
func unnestSource(from string, env Env) (alias string, rows []map[string]any, ok bool, err error) {
	if !strings.HasPrefix(from, "(") {
		return "", nil, false, nil
	}
	end := matchParen(from, 0)
	if end < 0 {
		return "", nil, false, nil
	}
	sub := strings.TrimSpace(from[1:end])
	list, isSelect := Clause(sub, "SELECT", "FROM")
	if !isSelect || !strings.Contains(strings.ToLower(list), "unnest(") {
		return "", nil, false, nil
	}
	alias = strings.TrimSpace(from[end+1:])
	if rest, ok := strings.CutPrefix(strings.ToUpper(alias), "AS "); ok {
		alias = strings.TrimSpace(alias[len(alias)-len(rest):])
	}
	if alias == "" || strings.ContainsAny(alias, " ()") {
		return "", nil, true, fmt.Errorf("leasesim: derived table %q has no alias", from)
	}
	cols := map[string][]any{}
	var names []string
	n := -1
	for _, item := range Split(list, ',') {
		m := unnestItem.FindStringSubmatch(strings.TrimSpace(item))
		if m == nil {
			return "", nil, true, fmt.Errorf("leasesim: %q is not unnest($n::type[]) AS name", item)
		}
		i, _ := strconv.Atoi(m[1])
		if env.Placeholder == nil {
			return "", nil, true, fmt.Errorf("leasesim: no bound values for $%d", i)
		}
		v, bound := env.Placeholder(i)
		if !bound {
			return "", nil, true, fmt.Errorf("leasesim: $%d is not bound", i)
		}
		arr := reflect.ValueOf(v)
		if arr.Kind() != reflect.Slice {
			return "", nil, true, fmt.Errorf("leasesim: $%d is a %T, not an array", i, v)
		}
		vals := make([]any, arr.Len())
		for j := range vals {
			vals[j] = arr.Index(j).Interface()
		}
		if n >= 0 && len(vals) != n {
			return "", nil, true, fmt.Errorf("leasesim: unnest over arrays of %d and %d elements", n, len(vals))
		}
		n = len(vals)
		name := strings.ToLower(m[2])
		cols[name] = vals
		names = append(names, name)
	}
	for j := range max(n, 0) {
		row := map[string]any{}
		for _, name := range names {
			row[name] = cols[name][j]
		}
		rows = append(rows, row)
	}
	return alias, rows, true, nil
}

// execUpdateJoin runs UPDATE table [AS t] SET … WHERE … [RETURNING e]
// (its FROM taken out) joined to the rows of source: a row of the table
// is changed once, by the first source row the WHERE matches with it, as
// PostgreSQL's UPDATE … FROM changes a row once.
func (t *Table) execUpdateJoin(sql, source string, src []map[string]any, env Env) (Result, error) {
	if err := t.target(sql); err != nil {
		return Result{}, err
	}
	set, ok := Clause(sql, "SET", "WHERE", "RETURNING")
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
		for _, s := range src {
			renv := t.rowEnv(env, r, alias, source, s)
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
			break
		}
	}
	res.Matched = len(res.Rows) > 0
	return res, nil
}
