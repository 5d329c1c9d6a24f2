package leasesim

import (
	"fmt"
	"strings"
)

// Clause returns the text of sql between the keyword start and the first
// of ends that follows it, both at the top level (outside parentheses and
// string literals) and whole words; ok is false when start is missing. An
// end not found runs the clause to the end of sql. Whitespace around the
// clause is trimmed.
func Clause(sql, start string, ends ...string) (string, bool) {
	i := find(sql, start, 0)
	if i < 0 {
		return "", false
	}
	from := i + len(start)
	to := len(sql)
	for _, end := range ends {
		if j := find(sql, end, from); j >= 0 && j < to {
			to = j
		}
	}
	return strings.TrimSpace(sql[from:to]), true
}

// find is the index of the first top-level whole-word occurrence of word
// in s at or after from, or -1.
func find(s, word string, from int) int {
	depth, quoted := 0, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'':
			quoted = !quoted
			continue
		case quoted:
			continue
		case c == '(':
			depth++
			continue
		case c == ')':
			depth--
			continue
		}
		if i < from || depth != 0 || !strings.HasPrefix(s[i:], word) {
			continue
		}
		before := i == 0 || !isWord(s[i-1]) || !isWord(word[0])
		after := i+len(word) == len(s) || !isWord(s[i+len(word)]) || !isWord(word[len(word)-1])
		if before && after {
			return i
		}
	}
	return -1
}

func isWord(c byte) bool { return isIdentStart(c) || c >= '0' && c <= '9' || c == '.' }

// Split cuts s at each top-level sep (outside parentheses and string
// literals), trimming the parts.
func Split(s string, sep byte) []string {
	var out []string
	depth, quoted, last := 0, false, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\'':
			quoted = !quoted
		case quoted:
		case c == '(':
			depth++
		case c == ')':
			depth--
		case c == sep && depth == 0:
			out = append(out, strings.TrimSpace(s[last:i]))
			last = i + 1
		}
	}
	return append(out, strings.TrimSpace(s[last:]))
}

// Assignment is one "column = expression" of a SET list.
type Assignment struct {
	Column string // without a table alias
	Expr   string
}

// Assignments parses a SET list. Every item must be "column = expr",
// the column a plain or alias-qualified name, each column at most once;
// anything else (a comparison operator in place of "=") is an error.
func Assignments(set string) ([]Assignment, error) {
	var out []Assignment
	seen := map[string]bool{}
	for _, item := range Split(set, ',') {
		lhs, rhs, ok := strings.Cut(item, " = ")
		lhs = strings.TrimSpace(lhs)
		if !ok || lhs == "" || strings.ContainsAny(lhs, " ()<>!=") {
			return nil, fmt.Errorf("leasesim: %q is not an assignment", item)
		}
		if i := strings.LastIndexByte(lhs, '.'); i >= 0 {
			lhs = lhs[i+1:]
		}
		key := strings.ToLower(lhs)
		if seen[key] {
			return nil, fmt.Errorf("leasesim: %s assigned twice in %q", lhs, set)
		}
		seen[key] = true
		out = append(out, Assignment{Column: lhs, Expr: strings.TrimSpace(rhs)})
	}
	return out, nil
}

// Aliases parses "e1 AS a1, e2 AS a2, …" (a SELECT list whose items are
// all named, or columns of a subquery named after themselves) into
// alias → expression.
func Aliases(list string) (map[string]string, error) {
	out := map[string]string{}
	for _, item := range Split(list, ',') {
		i := strings.LastIndex(item, " AS ")
		if i < 0 {
			// A column read from a subquery is named after the column.
			if _, col, ok := strings.Cut(item, "."); ok && !strings.ContainsAny(item, " ()") {
				out[col] = item
				continue
			}
			return nil, fmt.Errorf("leasesim: %q has no alias", item)
		}
		out[strings.TrimSpace(item[i+len(" AS "):])] = strings.TrimSpace(item[:i])
	}
	return out, nil
}

// NumberMarks rewrites the "?" placeholders of sql (outside string
// literals) as :1, :2, … in order, so the parts of a statement evaluated
// apart still bind the values of their own places.
func NumberMarks(sql string) string {
	var b strings.Builder
	n, quoted := 0, false
	for i := 0; i < len(sql); i++ {
		c := sql[i]
		switch {
		case c == '\'':
			quoted = !quoted
		case c == '?' && !quoted:
			n++
			fmt.Fprintf(&b, ":%d", n)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}
