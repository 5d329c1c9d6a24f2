// Package leasesim is the lease model the SQL simulators share: those of
// the dialects without a server here (Oracle, Dameng, SQL Server) and the
// PostgreSQL-wire simulator of the postgres dialect (KingbaseES,
// openGauss, CockroachDB). It runs the lease-table writes the builders
// write (UPDATE, DELETE, MERGE, INSERT … ON CONFLICT and ON DUPLICATE KEY
// UPDATE; see Table.Exec) from their text, evaluating their conditions
// and assignments, so a statement that means the opposite (a comparison
// flipped, an owner check turned around) behaves the opposite in the
// simulator and the dialect's tests fail. A simulator that dispatched on
// the exact text of a golden file would accept any statement the golden
// file was regenerated with.
//
// It is a test-only package: only tests and their helper packages (such
// as dialects/internal/oralike/oraliketest) import it.
//
// The evaluator knows the SQL expression forms the lease statements use:
// comparisons, AND / OR / NOT, + - * / %, CASE (searched and simple),
// CAST and ::, TIMESTAMP and INTERVAL literals, AT TIME ZONE 'UTC',
// NUMTODSINTERVAL, GREATEST / LEAST, DATE_TRUNC and DATEADD; identifiers,
// placeholders and the dialect's own functions are resolved by the caller
// (Env).
package leasesim

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Env resolves what the expression language leaves to the database: the
// value of an identifier (a column, a source alias such as s.new_owner,
// a pseudo-column such as SYSTIMESTAMP), of a placeholder (numbered from
// 1 in order of appearance for "?", by its number for :n, @pn and $n), and
// of a function call the package does not know.
type Env struct {
	Ident       func(name string) (any, bool)
	Placeholder func(n int) (any, bool)
	Func        func(name string, args []any) (any, bool, error)
	// IntDiv makes "/" of two integers an integer division (SQL Server's
	// int); otherwise it is exact (Oracle's NUMBER).
	IntDiv bool
	// CompareStrings, when set, compares two strings (a collation);
	// otherwise strings compare byte by byte.
	CompareStrings func(a, b string) int
}

// Eval evaluates the SQL expression expr. Values are nil (NULL), bool,
// int64, float64 (decimal), string, time.Time and time.Duration
// (intervals).
func Eval(expr string, env Env) (any, error) {
	toks, err := tokenize(expr)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks, env: env}
	v, err := p.or()
	if err != nil {
		return nil, fmt.Errorf("leasesim: %w in %q", err, expr)
	}
	if !p.at(tokEOF, "") {
		return nil, fmt.Errorf("leasesim: unexpected %q in %q", p.peek().text, expr)
	}
	return v, nil
}

// Cond evaluates the condition cond: true only when it is TRUE (NULL, an
// unknown comparison, is false, as in a WHERE clause). A condition that is
// not a boolean expression is an error.
func Cond(cond string, env Env) (bool, error) {
	v, err := Eval(cond, env)
	if err != nil {
		return false, err
	}
	switch b := v.(type) {
	case nil:
		return false, nil
	case bool:
		return b, nil
	}
	return false, fmt.Errorf("leasesim: %q is %T, not a condition", cond, v)
}

type tokKind int

const (
	tokEOF tokKind = iota
	tokIdent
	tokNum
	tokStr
	tokPlace
	tokOp
)

type token struct {
	kind tokKind
	text string
	n    int // placeholder number
}

func tokenize(s string) ([]token, error) {
	var out []token
	q := 0 // "?" placeholders so far
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\n' || c == '\t' || c == '\r':
			i++
		case c == '\'':
			j := i + 1
			var b strings.Builder
			for {
				if j >= len(s) {
					return nil, errors.New("leasesim: unterminated string")
				}
				if s[j] == '\'' {
					if j+1 < len(s) && s[j+1] == '\'' {
						b.WriteByte('\'')
						j += 2
						continue
					}
					break
				}
				b.WriteByte(s[j])
				j++
			}
			out = append(out, token{kind: tokStr, text: b.String()})
			i = j + 1
		case c >= '0' && c <= '9':
			j := i
			for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == '.') {
				j++
			}
			out = append(out, token{kind: tokNum, text: s[i:j]})
			i = j
		case c == '?':
			q++
			out = append(out, token{kind: tokPlace, text: "?", n: q})
			i++
		case (c == ':' || c == '$') && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9',
			c == '@' && i+2 < len(s) && s[i+1] == 'p' && s[i+2] >= '0' && s[i+2] <= '9':
			j := i + 1
			if c == '@' {
				j++
			}
			k := j
			for k < len(s) && s[k] >= '0' && s[k] <= '9' {
				k++
			}
			n, _ := strconv.Atoi(s[j:k])
			out = append(out, token{kind: tokPlace, text: s[i:k], n: n})
			i = k
		case isIdentStart(c):
			j := i
			for j < len(s) && (isIdentStart(s[j]) || s[j] >= '0' && s[j] <= '9' || s[j] == '.' || s[j] == '$' || s[j] == '#') {
				j++
			}
			out = append(out, token{kind: tokIdent, text: s[i:j]})
			i = j
		default:
			op := string(c)
			if i+1 < len(s) {
				switch two := s[i : i+2]; two {
				case "<=", ">=", "<>", "!=", "||", "::":
					op = two
				}
			}
			if !strings.Contains("=<>!|:+-*/%(),", op[:1]) {
				return nil, fmt.Errorf("leasesim: unexpected character %q in %q", c, s)
			}
			out = append(out, token{kind: tokOp, text: op})
			i += len(op)
		}
	}
	return append(out, token{kind: tokEOF}), nil
}

func isIdentStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

type parser struct {
	toks []token
	pos  int
	env  Env
}

func (p *parser) peek() token { return p.toks[p.pos] }

// at reports whether the next token is of kind and, for operators and
// keywords, spelled text (keywords in any case).
func (p *parser) at(kind tokKind, text string) bool {
	t := p.peek()
	if t.kind != kind {
		return false
	}
	return text == "" || strings.EqualFold(t.text, text)
}

func (p *parser) keyword(word string) bool {
	if p.at(tokIdent, word) {
		p.pos++
		return true
	}
	return false
}

func (p *parser) op(text string) bool {
	if p.at(tokOp, text) {
		p.pos++
		return true
	}
	return false
}

func (p *parser) expect(text string) error {
	if p.op(text) || p.keyword(text) {
		return nil
	}
	return fmt.Errorf("expected %q, found %q", text, p.peek().text)
}

func (p *parser) or() (any, error) {
	l, err := p.and()
	if err != nil {
		return nil, err
	}
	for p.keyword("OR") {
		r, err := p.and()
		if err != nil {
			return nil, err
		}
		if l, err = logic(l, r, false); err != nil {
			return nil, err
		}
	}
	return l, nil
}

func (p *parser) and() (any, error) {
	l, err := p.not()
	if err != nil {
		return nil, err
	}
	for p.keyword("AND") {
		r, err := p.not()
		if err != nil {
			return nil, err
		}
		if l, err = logic(l, r, true); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// logic is SQL's three-valued AND (and true) or OR.
func logic(l, r any, and bool) (any, error) {
	lb, lok := l.(bool)
	rb, rok := r.(bool)
	if (!lok && l != nil) || (!rok && r != nil) {
		return nil, fmt.Errorf("AND/OR of %T and %T", l, r)
	}
	switch {
	case and && ((lok && !lb) || (rok && !rb)):
		return false, nil
	case !and && ((lok && lb) || (rok && rb)):
		return true, nil
	case l == nil || r == nil:
		return nil, nil
	}
	return and, nil // both decided the other way
}

func (p *parser) not() (any, error) {
	if p.keyword("NOT") {
		v, err := p.not()
		if err != nil {
			return nil, err
		}
		switch b := v.(type) {
		case nil:
			return nil, nil
		case bool:
			return !b, nil
		}
		return nil, fmt.Errorf("NOT of %T", v)
	}
	return p.cmp()
}

func (p *parser) cmp() (any, error) {
	l, err := p.add()
	if err != nil {
		return nil, err
	}
	if p.keyword("IS") {
		neg := p.keyword("NOT")
		if err := p.expect("NULL"); err != nil {
			return nil, err
		}
		return (l == nil) != neg, nil
	}
	if p.keyword("IN") {
		return p.in(l)
	}
	for _, op := range []string{"=", "<>", "!=", "<=", ">=", "<", ">"} {
		if !p.op(op) {
			continue
		}
		r, err := p.add()
		if err != nil {
			return nil, err
		}
		if l == nil || r == nil {
			return nil, nil
		}
		c, err := p.compare(l, r)
		if err != nil {
			return nil, err
		}
		switch op {
		case "=":
			return c == 0, nil
		case "<>", "!=":
			return c != 0, nil
		case "<=":
			return c <= 0, nil
		case ">=":
			return c >= 0, nil
		case "<":
			return c < 0, nil
		}
		return c > 0, nil
	}
	return l, nil
}

// in reads "(a, b, …)" after IN: true when l equals one of them, NULL
// when it equals none and one of them (or l) is NULL, as SQL has it.
func (p *parser) in(l any) (any, error) {
	if err := p.expect("("); err != nil {
		return nil, err
	}
	var found, null bool
	for {
		r, err := p.or()
		if err != nil {
			return nil, err
		}
		switch {
		case l == nil || r == nil:
			null = true
		case !found:
			c, err := p.compare(l, r)
			if err != nil {
				return nil, err
			}
			found = c == 0
		}
		if p.op(",") {
			continue
		}
		if err := p.expect(")"); err != nil {
			return nil, err
		}
		break
	}
	switch {
	case found:
		return true, nil
	case null:
		return nil, nil
	}
	return false, nil
}

// compare orders two non-NULL values of one kind (numbers of either
// representation compare as numbers).
func (p *parser) compare(l, r any) (int, error) {
	if lf, ok := number(l); ok {
		if rf, ok := number(r); ok {
			return cmp3(lf < rf, lf > rf), nil
		}
	}
	switch a := l.(type) {
	case string:
		if b, ok := r.(string); ok {
			if p.env.CompareStrings != nil {
				return p.env.CompareStrings(a, b), nil
			}
			return strings.Compare(a, b), nil
		}
	case time.Time:
		if b, ok := r.(time.Time); ok {
			return a.Compare(b), nil
		}
	case time.Duration:
		if b, ok := r.(time.Duration); ok {
			return cmp3(a < b, a > b), nil
		}
	case bool:
		if b, ok := r.(bool); ok {
			return cmp3(!a && b, a && !b), nil
		}
	case rowValue:
		if b, ok := r.(rowValue); ok && len(a) == len(b) {
			for i := range a {
				if a[i] == nil || b[i] == nil {
					return 1, nil // a NULL element: not equal (the tests need no NULL rows)
				}
				c, err := p.compare(a[i], b[i])
				if err != nil || c != 0 {
					return c, err
				}
			}
			return 0, nil
		}
	}
	return 0, fmt.Errorf("cannot compare %T with %T", l, r)
}

// rowValue is a row constructor's value, (a, b, …).
type rowValue []any

func cmp3(less, more bool) int {
	switch {
	case less:
		return -1
	case more:
		return 1
	}
	return 0
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}

func (p *parser) add() (any, error) {
	l, err := p.mul()
	if err != nil {
		return nil, err
	}
	for {
		var op string
		switch {
		case p.op("+"):
			op = "+"
		case p.op("-"):
			op = "-"
		case p.op("||"):
			op = "||"
		default:
			return l, nil
		}
		r, err := p.mul()
		if err != nil {
			return nil, err
		}
		if l, err = p.arith(op, l, r); err != nil {
			return nil, err
		}
	}
}

func (p *parser) mul() (any, error) {
	l, err := p.unary()
	if err != nil {
		return nil, err
	}
	for {
		var op string
		switch {
		case p.op("*"):
			op = "*"
		case p.op("/"):
			op = "/"
		case p.op("%"):
			op = "%"
		default:
			return l, nil
		}
		r, err := p.unary()
		if err != nil {
			return nil, err
		}
		if l, err = p.arith(op, l, r); err != nil {
			return nil, err
		}
	}
}

func (p *parser) unary() (any, error) {
	if p.op("-") {
		v, err := p.unary()
		if err != nil {
			return nil, err
		}
		return p.arith("-", int64(0), v)
	}
	v, err := p.primary()
	if err != nil {
		return nil, err
	}
	for {
		switch {
		case p.op("::"): // PostgreSQL's cast
			typ, err := p.typeName()
			if err != nil {
				return nil, err
			}
			if v, err = cast(v, typ); err != nil {
				return nil, err
			}
		case p.keyword("AT"):
			if v, err = p.atTimeZone(v); err != nil {
				return nil, err
			}
		default:
			return v, nil
		}
	}
}

// atTimeZone reads "TIME ZONE 'zone'" after AT. The simulated clocks read
// UTC and the lease columns hold UTC, so only 'UTC' is known: it leaves
// the time as it is (a timestamp with time zone read as UTC wall-clock
// time). Another zone is an error rather than a guess.
func (p *parser) atTimeZone(v any) (any, error) {
	if err := p.expect("TIME"); err != nil {
		return nil, err
	}
	if err := p.expect("ZONE"); err != nil {
		return nil, err
	}
	if !p.at(tokStr, "") {
		return nil, fmt.Errorf("AT TIME ZONE %q", p.peek().text)
	}
	zone := p.peek().text
	p.pos++
	if v == nil {
		return nil, nil
	}
	t, ok := v.(time.Time)
	if !ok || !strings.EqualFold(zone, "UTC") {
		return nil, fmt.Errorf("%T AT TIME ZONE '%s'", v, zone)
	}
	return t.UTC(), nil
}

// arith applies a binary arithmetic operator.
func (p *parser) arith(op string, l, r any) (any, error) {
	if l == nil || r == nil {
		return nil, nil
	}
	if op == "||" {
		return fmt.Sprint(l) + fmt.Sprint(r), nil
	}
	li, lInt := l.(int64)
	ri, rInt := r.(int64)
	if lInt && rInt {
		switch op {
		case "+":
			return li + ri, nil
		case "-":
			return li - ri, nil
		case "*":
			return li * ri, nil
		case "%":
			if ri == 0 {
				return nil, errors.New("division by zero")
			}
			return li % ri, nil
		case "/":
			if ri == 0 {
				return nil, errors.New("division by zero")
			}
			if p.env.IntDiv {
				return li / ri, nil
			}
			return float64(li) / float64(ri), nil
		}
	}
	lf, lNum := number(l)
	rf, rNum := number(r)
	if lNum && rNum {
		switch op {
		case "+":
			return lf + rf, nil
		case "-":
			return lf - rf, nil
		case "*":
			return lf * rf, nil
		case "/":
			if rf == 0 {
				return nil, errors.New("division by zero")
			}
			return lf / rf, nil
		case "%":
			return math.Mod(lf, rf), nil
		}
	}
	if d, ok := r.(time.Duration); ok && op == "*" {
		if f, ok := number(l); ok {
			return scale(d, f, op)
		}
	}
	switch a := l.(type) {
	case time.Time:
		switch b := r.(type) {
		case time.Duration:
			switch op {
			case "+":
				return a.Add(b), nil
			case "-":
				return a.Add(-b), nil
			}
		case time.Time:
			if op == "-" {
				return a.Sub(b), nil
			}
		}
	case time.Duration:
		if f, ok := number(r); ok && (op == "*" || op == "/") {
			return scale(a, f, op)
		}
		switch b := r.(type) {
		case time.Duration:
			switch op {
			case "+":
				return a + b, nil
			case "-":
				return a - b, nil
			}
		case time.Time:
			if op == "+" {
				return b.Add(a), nil
			}
		}
	}
	return nil, fmt.Errorf("%T %s %T", l, op, r)
}

func (p *parser) primary() (any, error) {
	t := p.peek()
	switch t.kind {
	case tokNum:
		p.pos++
		if strings.Contains(t.text, ".") {
			return strconv.ParseFloat(t.text, 64)
		}
		return strconv.ParseInt(t.text, 10, 64)
	case tokStr:
		p.pos++
		return t.text, nil
	case tokPlace:
		p.pos++
		if p.env.Placeholder != nil {
			if v, ok := p.env.Placeholder(t.n); ok {
				return v, nil
			}
		}
		return nil, fmt.Errorf("placeholder %s is not bound", t.text)
	case tokOp:
		if p.op("(") {
			v, err := p.or()
			if err != nil {
				return nil, err
			}
			if !p.op(",") {
				return v, p.expect(")")
			}
			// A row value: (a, b, …), compared element by element.
			row := rowValue{v}
			for {
				e, err := p.or()
				if err != nil {
					return nil, err
				}
				row = append(row, e)
				if !p.op(",") {
					break
				}
			}
			return row, p.expect(")")
		}
		return nil, fmt.Errorf("unexpected %q", t.text)
	case tokIdent:
		return p.ident()
	}
	return nil, errors.New("unexpected end")
}

func (p *parser) ident() (any, error) {
	t := p.peek()
	p.pos++
	word := strings.ToUpper(t.text)
	switch word {
	case "NULL":
		return nil, nil
	case "TRUE":
		return true, nil
	case "FALSE":
		return false, nil
	case "CASE":
		return p.caseExpr()
	case "TIMESTAMP":
		if p.at(tokStr, "") {
			lit := p.peek().text
			p.pos++
			for _, layout := range []string{"2006-01-02 15:04:05.999999999", "2006-01-02"} {
				if ts, err := time.Parse(layout, lit); err == nil {
					return ts, nil
				}
			}
			return nil, fmt.Errorf("bad TIMESTAMP literal %q", lit)
		}
	case "INTERVAL":
		if p.at(tokStr, "") {
			lit := p.peek().text
			p.pos++
			return interval(lit)
		}
	case "CAST":
		if err := p.expect("("); err != nil {
			return nil, err
		}
		v, err := p.or()
		if err != nil {
			return nil, err
		}
		if err := p.expect("AS"); err != nil {
			return nil, err
		}
		typ, err := p.typeName()
		if err != nil {
			return nil, err
		}
		if err := p.expect(")"); err != nil {
			return nil, err
		}
		return cast(v, typ)
	case "DATEADD":
		if err := p.expect("("); err != nil {
			return nil, err
		}
		if !p.at(tokIdent, "") {
			return nil, errors.New("DATEADD without a unit")
		}
		unit := strings.ToLower(p.peek().text)
		p.pos++
		args, err := p.args()
		if err != nil {
			return nil, err
		}
		return dateAdd(unit, args)
	}
	if p.op("(") {
		var args []any
		if !p.op(")") {
			for {
				v, err := p.or()
				if err != nil {
					return nil, err
				}
				args = append(args, v)
				if p.op(",") {
					continue
				}
				if err := p.expect(")"); err != nil {
					return nil, err
				}
				break
			}
		}
		return p.call(word, args)
	}
	if p.env.Ident != nil {
		if v, ok := p.env.Ident(t.text); ok {
			return v, nil
		}
	}
	return nil, fmt.Errorf("unknown name %q", t.text)
}

// args reads ", a, b, …)": the arguments after a first one already read.
func (p *parser) args() ([]any, error) {
	var out []any
	for p.op(",") {
		v, err := p.or()
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, p.expect(")")
}

// typeName reads a type name with its optional (precision, scale).
func (p *parser) typeName() (string, error) {
	if !p.at(tokIdent, "") {
		return "", fmt.Errorf("expected a type, found %q", p.peek().text)
	}
	typ := strings.ToUpper(p.peek().text)
	p.pos++
	if p.op("(") {
		depth := 1
		for depth > 0 {
			switch {
			case p.at(tokEOF, ""):
				return "", errors.New("unterminated type")
			case p.op("("):
				depth++
			case p.op(")"):
				depth--
			default:
				p.pos++
			}
		}
	}
	return typ, nil
}

func (p *parser) caseExpr() (any, error) {
	var subject any
	simple := !p.at(tokIdent, "WHEN")
	if simple {
		v, err := p.or()
		if err != nil {
			return nil, err
		}
		subject = v
	}
	var result any
	decided := false
	for p.keyword("WHEN") {
		w, err := p.or()
		if err != nil {
			return nil, err
		}
		if err := p.expect("THEN"); err != nil {
			return nil, err
		}
		v, err := p.or()
		if err != nil {
			return nil, err
		}
		if decided {
			continue
		}
		hit := false
		if simple {
			if subject != nil && w != nil {
				c, err := p.compare(subject, w)
				if err != nil {
					return nil, err
				}
				hit = c == 0
			}
		} else {
			b, ok := w.(bool)
			if !ok && w != nil {
				return nil, fmt.Errorf("CASE WHEN of %T", w)
			}
			hit = ok && b
		}
		if hit {
			result, decided = v, true
		}
	}
	if p.keyword("ELSE") {
		v, err := p.or()
		if err != nil {
			return nil, err
		}
		if !decided {
			result = v
		}
	}
	return result, p.expect("END")
}

// call runs a function: the caller's (Env.Func) first, then the ones the
// package knows.
func (p *parser) call(name string, args []any) (any, error) {
	if p.env.Func != nil {
		v, ok, err := p.env.Func(name, args)
		if err != nil || ok {
			return v, err
		}
	}
	switch name {
	case "NUMTODSINTERVAL":
		if len(args) != 2 {
			return nil, errors.New("NUMTODSINTERVAL takes 2 arguments")
		}
		n, ok := number(args[0])
		unit, _ := args[1].(string)
		if !ok || !strings.EqualFold(unit, "SECOND") {
			return nil, fmt.Errorf("NUMTODSINTERVAL(%v, %v)", args[0], args[1])
		}
		return time.Duration(math.Round(n * float64(time.Second))), nil
	case "GREATEST", "LEAST":
		if len(args) == 0 {
			return nil, errors.New(name + " without arguments")
		}
		best := args[0]
		for _, a := range args[1:] {
			if a == nil || best == nil {
				return nil, nil
			}
			c, err := p.compare(a, best)
			if err != nil {
				return nil, err
			}
			if (name == "GREATEST" && c > 0) || (name == "LEAST" && c < 0) {
				best = a
			}
		}
		return best, nil
	case "DATE_TRUNC":
		if len(args) != 2 {
			return nil, errors.New("DATE_TRUNC takes 2 arguments")
		}
		unit, _ := args[0].(string)
		if args[1] == nil {
			return nil, nil
		}
		t, ok := args[1].(time.Time)
		step, known := truncUnits[strings.ToLower(unit)]
		if !ok || !known {
			return nil, fmt.Errorf("DATE_TRUNC(%v, %T)", args[0], args[1])
		}
		return t.Truncate(step), nil
	case "COALESCE":
		for _, a := range args {
			if a != nil {
				return a, nil
			}
		}
		return nil, nil
	}
	return nil, fmt.Errorf("unknown function %s", name)
}

// cast converts v to the SQL type typ (its name without precision).
func cast(v any, typ string) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch typ {
	case "DECIMAL", "NUMBER", "NUMERIC", "FLOAT", "DOUBLE":
		if f, ok := number(v); ok {
			return f, nil
		}
	case "INT", "INTEGER", "BIGINT", "SMALLINT":
		if f, ok := number(v); ok {
			return int64(f), nil // truncates toward zero, as the integer casts do
		}
	case "TIMESTAMP", "DATETIME2", "DATETIME", "TIMESTAMPTZ":
		switch t := v.(type) {
		case time.Time:
			return t.Truncate(time.Millisecond), nil
		case string:
			for _, layout := range []string{"2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999"} {
				if ts, err := time.Parse(layout, t); err == nil {
					return ts, nil
				}
			}
		}
	case "VARCHAR", "NVARCHAR", "VARCHAR2", "TEXT", "CHAR":
		return fmt.Sprint(v), nil
	}
	return nil, fmt.Errorf("CAST(%T AS %s)", v, typ)
}

// dateAdd is SQL Server's DATEADD(unit, n, t).
func dateAdd(unit string, args []any) (any, error) {
	if len(args) != 2 {
		return nil, errors.New("DATEADD takes 3 arguments")
	}
	n, ok := args[0].(int64)
	t, tok := args[1].(time.Time)
	if args[0] == nil || args[1] == nil {
		return nil, nil
	}
	if !ok || !tok {
		return nil, fmt.Errorf("DATEADD(%s, %T, %T)", unit, args[0], args[1])
	}
	switch unit {
	case "millisecond":
		return t.Add(time.Duration(n) * time.Millisecond), nil
	case "second":
		return t.Add(time.Duration(n) * time.Second), nil
	case "day":
		return t.AddDate(0, 0, int(n)), nil
	}
	return nil, fmt.Errorf("DATEADD unit %s", unit)
}

// truncUnits are the units DATE_TRUNC knows, as durations.
var truncUnits = map[string]time.Duration{
	"microseconds": time.Microsecond, "milliseconds": time.Millisecond, "second": time.Second,
	"minute": time.Minute, "hour": time.Hour,
}

// interval parses an INTERVAL literal's text, "n unit" (PostgreSQL's
// '1 millisecond', '5 seconds', …).
func interval(lit string) (time.Duration, error) {
	n, unit, ok := strings.Cut(strings.TrimSpace(lit), " ")
	f, err := strconv.ParseFloat(n, 64)
	if !ok || err != nil {
		return 0, fmt.Errorf("bad INTERVAL literal %q", lit)
	}
	units := map[string]time.Duration{
		"microsecond": time.Microsecond, "millisecond": time.Millisecond, "second": time.Second,
		"minute": time.Minute, "hour": time.Hour, "day": 24 * time.Hour,
	}
	step, known := units[strings.TrimSuffix(strings.ToLower(strings.TrimSpace(unit)), "s")]
	if !known {
		return 0, fmt.Errorf("INTERVAL unit of %q", lit)
	}
	return time.Duration(math.Round(f * float64(step))), nil
}

// scale multiplies (op "*") or divides (op "/") the interval d by f.
func scale(d time.Duration, f float64, op string) (time.Duration, error) {
	if op == "/" {
		if f == 0 {
			return 0, errors.New("division by zero")
		}
		f = 1 / f
	}
	return time.Duration(math.Round(float64(d) * f)), nil
}
