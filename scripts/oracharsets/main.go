//go:build ignore

// Command oracharsets builds go-ora with its character set tables
// compressed, for the release binary.
//
// go-ora (github.com/sijms/go-ora/v2) keeps every Oracle character set's
// conversion tables as Go literals in one function, converters.
// NewStringConverter in string_conversion_new.go: []int and map[int]int
// literals that the linker keeps whole, about 12 MB of the binary, though a
// database uses one or two of them (AL32UTF8 needs none). This command
// reads that file, checks it has the one shape it understands (a switch on
// the character set ID whose cases return a &StringConverter literal, fall
// through, or return nil), and writes, under -out:
//
//   - go-ora/: a copy of the go-ora module go.mod requires, in which that
//     file is replaced by one of the same package with the same function
//     and the same results, its tables compressed (deflate) in one string
//     and decoded when a connection asks for its character set; nothing
//     else changes;
//   - go.mod, go.sum: the project's, go.mod with a replace directive to
//     that copy, for go build -modfile.
//
// Used as:
//
//	go run scripts/oracharsets/main.go -out build/oracharsets
//	go build -modfile=build/oracharsets/go.mod .
//
// scripts/build.sh and .goreleaser.yaml do both (`go version -m` then shows
// go-ora v2.8.24 replaced by ./build/oracharsets/go-ora). TestOracleCharsets
// (oracle_charsets_test.go) builds a program printing every converter
// with and without the copy and compares them. The command fails on a file
// of any other shape rather than write an incomplete table, so a go-ora
// upgrade that changes the file stops the build until this command
// follows it. Run it from the module's directory.
package main

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

const (
	goOra    = "github.com/sijms/go-ora/v2"
	fileName = "string_conversion_new.go"
)

func main() {
	out := flag.String("out", "", "directory for the go-ora copy, go.mod and go.sum")
	flag.Parse()
	if *out == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: go run scripts/oracharsets/main.go -out DIR")
		os.Exit(2)
	}
	if err := run(*out); err != nil {
		fmt.Fprintln(os.Stderr, "oracharsets:", err)
		os.Exit(1)
	}
}

func goCmd(args ...string) (string, error) {
	out, err := exec.Command("go", args...).Output()
	if err != nil {
		return "", fmt.Errorf("go %s: %w", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out)), nil
}

func run(out string) error {
	modDir, err := goCmd("list", "-m", "-f", "{{.Dir}}", goOra)
	if err != nil {
		return err
	}
	gomod, err := goCmd("env", "GOMOD")
	if err != nil {
		return err
	}
	src := filepath.Join(modDir, "converters", fileName)
	sets, err := read(src)
	if err != nil {
		return fmt.Errorf("%s: %w", src, err)
	}
	code, err := render(sets)
	if err != nil {
		return err
	}
	out, err = filepath.Abs(out)
	if err != nil {
		return err
	}
	dst := filepath.Join(out, "go-ora")
	if err := os.RemoveAll(dst); err != nil {
		return err
	}
	if err := copyModule(modDir, dst); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dst, "converters", fileName), code, 0o644); err != nil {
		return err
	}
	// The replace path is relative to the project when the copy is in it,
	// so that the binary's build information names no machine's path.
	root := filepath.Dir(gomod)
	target := dst
	if rel, err := filepath.Rel(root, dst); err == nil && filepath.IsLocal(rel) {
		target = "./" + filepath.ToSlash(rel)
	}
	mod, err := os.ReadFile(gomod)
	if err != nil {
		return err
	}
	mod = append(mod, "\n// Written by scripts/oracharsets: go-ora with its character set tables compressed.\nreplace "+goOra+" => "+target+"\n"...)
	if err := os.WriteFile(filepath.Join(out, "go.mod"), mod, 0o644); err != nil {
		return err
	}
	sum, err := os.ReadFile(strings.TrimSuffix(gomod, ".mod") + ".sum")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, "go.sum"), sum, 0o644)
}

// copyModule copies the module directory from (read-only in the module
// cache) to to, without its tests, writable.
func copyModule(from, to string) error {
	return filepath.WalkDir(from, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(from, path)
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		if strings.HasSuffix(path, "_test.go") || !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), b, 0o644)
	})
}

// charset is one StringConverter literal and the IDs that return it.
type charset struct {
	ids    []int64
	argID  bool                  // LangID is the function's argument
	ints   map[string]int64      // LangID, CharWidth, eReplace, dReplace (absent: 0)
	slices map[string][]int64    // dBuffer, dBuffer2 (absent: nil)
	maps   map[string][][2]int64 // eBuffer, leading (absent: nil), by key
}

var (
	intFields   = []string{"LangID", "CharWidth", "eReplace", "dReplace"}
	sliceFields = []string{"dBuffer", "dBuffer2"}
	mapFields   = []string{"eBuffer", "leading"}
)

// read parses go-ora's file into its character sets, in case order.
func read(path string) ([]*charset, error) {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var fn *ast.FuncDecl
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Name.Name != "NewStringConverter" || fn != nil {
				return nil, fmt.Errorf("unexpected function %s", d.Name.Name)
			}
			fn = d
		case *ast.GenDecl:
			if d.Tok != token.IMPORT {
				return nil, fmt.Errorf("unexpected %s declaration", d.Tok)
			}
		}
	}
	if fn == nil || len(fn.Body.List) != 1 {
		return nil, errors.New("NewStringConverter is not one switch statement")
	}
	sw, ok := fn.Body.List[0].(*ast.SwitchStmt)
	if !ok || sw.Init != nil {
		return nil, errors.New("NewStringConverter is not one switch statement")
	}
	arg, ok := sw.Tag.(*ast.Ident)
	if !ok || len(fn.Type.Params.List) != 1 || fn.Type.Params.List[0].Names[0].Name != arg.Name {
		return nil, errors.New("the switch is not on the function's parameter")
	}
	var sets []*charset
	var pending []int64 // IDs of cases that fall through
	seen := map[int64]bool{}
	for _, st := range sw.Body.List {
		cc := st.(*ast.CaseClause)
		if cc.List == nil { // default
			if !returnsNil(cc.Body) || len(pending) > 0 {
				return nil, errors.New("the default case does not return nil")
			}
			continue
		}
		for _, e := range cc.List {
			id, err := intLit(e)
			if err != nil {
				return nil, fmt.Errorf("case: %w", err)
			}
			if seen[id] {
				return nil, fmt.Errorf("case %d twice", id)
			}
			seen[id] = true
			pending = append(pending, id)
		}
		if len(cc.Body) == 1 {
			if br, ok := cc.Body[0].(*ast.BranchStmt); ok && br.Tok == token.FALLTHROUGH {
				continue
			}
		}
		cs, err := converter(cc.Body, arg.Name)
		if err != nil {
			return nil, fmt.Errorf("case %d: %w", pending[len(pending)-1], err)
		}
		cs.ids, pending = pending, nil
		sets = append(sets, cs)
	}
	if len(pending) > 0 || len(sets) == 0 {
		return nil, errors.New("the switch ends in a fallthrough or has no case")
	}
	return sets, nil
}

func returnsNil(body []ast.Stmt) bool {
	if len(body) != 1 {
		return false
	}
	r, ok := body[0].(*ast.ReturnStmt)
	if !ok || len(r.Results) != 1 {
		return false
	}
	id, ok := r.Results[0].(*ast.Ident)
	return ok && id.Name == "nil"
}

// converter reads `return &StringConverter{...}`; its LangID may be the
// function's argument, named arg.
func converter(body []ast.Stmt, arg string) (*charset, error) {
	bad := errors.New("the case is not `return &StringConverter{…}`")
	if len(body) != 1 {
		return nil, bad
	}
	r, ok := body[0].(*ast.ReturnStmt)
	if !ok || len(r.Results) != 1 {
		return nil, bad
	}
	u, ok := r.Results[0].(*ast.UnaryExpr)
	if !ok || u.Op != token.AND {
		return nil, bad
	}
	lit, ok := u.X.(*ast.CompositeLit)
	if !ok {
		return nil, bad
	}
	if id, ok := lit.Type.(*ast.Ident); !ok || id.Name != "StringConverter" {
		return nil, bad
	}
	cs := &charset{ints: map[string]int64{}, slices: map[string][]int64{}, maps: map[string][][2]int64{}}
	for _, el := range lit.Elts {
		kv, ok := el.(*ast.KeyValueExpr)
		if !ok {
			return nil, errors.New("an unkeyed field")
		}
		key := kv.Key.(*ast.Ident).Name
		var err error
		switch {
		case key == "LangID" && isIdent(kv.Value, arg):
			cs.argID, cs.ints[key] = true, 0
		case slices.Contains(intFields, key):
			cs.ints[key], err = intLit(kv.Value)
		case slices.Contains(sliceFields, key):
			cs.slices[key], err = intSlice(kv.Value)
		case slices.Contains(mapFields, key):
			cs.maps[key], err = intMap(kv.Value)
		default:
			err = errors.New("unknown field")
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
	}
	if _, ok := cs.ints["LangID"]; !ok {
		return nil, errors.New("no LangID")
	}
	return cs, nil
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}

func intLit(e ast.Expr) (int64, error) {
	neg := false
	if u, ok := e.(*ast.UnaryExpr); ok && u.Op == token.SUB {
		neg, e = true, u.X
	}
	b, ok := e.(*ast.BasicLit)
	if !ok || b.Kind != token.INT {
		return 0, fmt.Errorf("not an integer literal: %T", e)
	}
	v, err := strconv.ParseInt(b.Value, 0, 64)
	if neg {
		v = -v
	}
	return v, err
}

func intSlice(e ast.Expr) ([]int64, error) {
	lit, ok := e.(*ast.CompositeLit)
	if !ok || typeString(lit.Type) != "[]int" {
		return nil, errors.New("not a []int literal")
	}
	vs := make([]int64, 0, len(lit.Elts))
	for _, el := range lit.Elts {
		if _, keyed := el.(*ast.KeyValueExpr); keyed {
			return nil, errors.New("an indexed element")
		}
		v, err := intLit(el)
		if err != nil {
			return nil, err
		}
		vs = append(vs, v)
	}
	return vs, nil
}

func intMap(e ast.Expr) ([][2]int64, error) {
	lit, ok := e.(*ast.CompositeLit)
	if !ok || typeString(lit.Type) != "map[int]int" {
		return nil, errors.New("not a map[int]int literal")
	}
	kvs := make([][2]int64, 0, len(lit.Elts))
	keys := map[int64]bool{}
	for _, el := range lit.Elts {
		kv, ok := el.(*ast.KeyValueExpr)
		if !ok {
			return nil, errors.New("an unkeyed element")
		}
		k, err := intLit(kv.Key)
		if err != nil {
			return nil, err
		}
		v, err := intLit(kv.Value)
		if err != nil {
			return nil, err
		}
		if keys[k] {
			return nil, fmt.Errorf("key %d twice", k)
		}
		keys[k] = true
		kvs = append(kvs, [2]int64{k, v})
	}
	slices.SortFunc(kvs, func(a, b [2]int64) int { return int(a[0] - b[0]) })
	return kvs, nil
}

func typeString(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.ArrayType:
		if t.Len == nil {
			return "[]" + typeString(t.Elt)
		}
	case *ast.MapType:
		return "map[" + typeString(t.Key) + "]" + typeString(t.Value)
	case *ast.Ident:
		return t.Name
	}
	return "?"
}

// encode is one character set: 1 if its LangID is the argument (else
// 0), then as varints the four integers, then each
// slice and map as present (0/1), length and values as differences from
// the one before (map keys ascending, then their values).
func (cs *charset) encode() []byte {
	b := []byte{0}
	if cs.argID {
		b[0] = 1
	}
	for _, k := range intFields {
		b = binary.AppendVarint(b, cs.ints[k])
	}
	seq := func(vs []int64) {
		prev := int64(0)
		for _, v := range vs {
			b = binary.AppendVarint(b, v-prev)
			prev = v
		}
	}
	for _, k := range sliceFields {
		vs, ok := cs.slices[k]
		if !ok {
			b = append(b, 0)
			continue
		}
		b = append(b, 1)
		b = binary.AppendUvarint(b, uint64(len(vs)))
		seq(vs)
	}
	for _, k := range mapFields {
		kvs, ok := cs.maps[k]
		if !ok {
			b = append(b, 0)
			continue
		}
		b = append(b, 1)
		b = binary.AppendUvarint(b, uint64(len(kvs)))
		keys, vals := make([]int64, len(kvs)), make([]int64, len(kvs))
		for i, kv := range kvs {
			keys[i], vals[i] = kv[0], kv[1]
		}
		seq(keys)
		seq(vals)
	}
	return b
}

func deflate(b []byte) ([]byte, error) {
	var buf bytes.Buffer
	w, err := flate.NewWriter(&buf, flate.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(b); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// render writes the replacement file.
func render(sets []*charset) ([]byte, error) {
	type entry struct{ id, set int64 }
	var entries []entry
	var data []byte
	var bounds [][2]int
	for i, cs := range sets {
		z, err := deflate(cs.encode())
		if err != nil {
			return nil, err
		}
		bounds = append(bounds, [2]int{len(data), len(data) + len(z)})
		data = append(data, z...)
		for _, id := range cs.ids {
			entries = append(entries, entry{id, int64(i)})
		}
	}
	slices.SortFunc(entries, func(a, b entry) int { return int(a.id - b.id) })
	var w bytes.Buffer
	w.WriteString(header)
	w.WriteString("// charsetIDs are the character set IDs, ascending, and charsetSets the\n// set each one decodes (an index into charsetBounds).\nvar charsetIDs = [...]int{")
	for i, e := range entries {
		if i > 0 {
			w.WriteString(", ")
		}
		fmt.Fprint(&w, e.id)
	}
	w.WriteString("}\n\nvar charsetSets = [...]uint16{")
	for i, e := range entries {
		if i > 0 {
			w.WriteString(", ")
		}
		fmt.Fprint(&w, e.set)
	}
	w.WriteString("}\n\n// charsetBounds are each set's bytes in charsetData.\nvar charsetBounds = [...][2]uint32{")
	for i, b := range bounds {
		if i > 0 {
			w.WriteString(", ")
		}
		fmt.Fprintf(&w, "{%d, %d}", b[0], b[1])
	}
	w.WriteString("}\n\n// charsetData holds every set, each deflated on its own.\nconst charsetData = ")
	var lit strings.Builder
	lit.WriteByte('"')
	for i, c := range data {
		if i > 0 && i%64 == 0 {
			lit.WriteString("\" +\n\t\"")
		}
		fmt.Fprintf(&lit, "\\x%02x", c)
	}
	lit.WriteByte('"')
	w.WriteString(lit.String())
	w.WriteString("\n" + decoder)
	return w.Bytes(), nil
}

const header = `// Code generated by scripts/oracharsets from go-ora's ` + fileName + `; DO NOT EDIT.

// In the release build (scripts/build.sh, .goreleaser.yaml) this file
// replaces go-ora's ` + fileName + `: the same NewStringConverter, with
// its tables compressed.

package converters

import (
	"compress/flate"
	"encoding/binary"
	"fmt"
	"io"
	"sort"
	"strings"
)

`

const decoder = `
// NewStringConverter returns the converter of the Oracle character set
// langID, or nil for one go-ora does not know.
func NewStringConverter(langID int) IStringConverter {
	i := sort.SearchInts(charsetIDs[:], langID)
	if i == len(charsetIDs) || charsetIDs[i] != langID {
		return nil
	}
	b := charsetBounds[charsetSets[i]]
	conv, err := decodeCharset(charsetData[b[0]:b[1]], langID)
	if err != nil {
		panic(fmt.Sprintf("go-ora character set %d: %v", langID, err))
	}
	return conv
}

func decodeCharset(z string, langID int) (*StringConverter, error) {
	raw, err := io.ReadAll(flate.NewReader(strings.NewReader(z)))
	if err != nil {
		return nil, err
	}
	if len(raw) == 0 || raw[0] > 1 {
		return nil, fmt.Errorf("corrupt table")
	}
	d := charsetReader{b: raw[1:]}
	conv := &StringConverter{LangID: d.num(), CharWidth: d.num(), eReplace: d.num(), dReplace: d.num()}
	if raw[0] == 1 {
		conv.LangID = langID
	}
	conv.dBuffer, conv.dBuffer2 = d.slice(), d.slice()
	conv.eBuffer, conv.leading = d.intMap(), d.intMap()
	if d.err != nil || len(d.b) > 0 {
		return nil, fmt.Errorf("corrupt table (%v, %d bytes left)", d.err, len(d.b))
	}
	return conv, nil
}

type charsetReader struct {
	b   []byte
	err error
}

func (d *charsetReader) num() int {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.err, d.b = io.ErrUnexpectedEOF, nil
		return 0
	}
	d.b = d.b[n:]
	return int(v)
}

func (d *charsetReader) count() (int, bool) {
	if len(d.b) == 0 {
		d.err = io.ErrUnexpectedEOF
		return 0, false
	}
	flag := d.b[0]
	d.b = d.b[1:]
	if flag != 1 {
		if flag != 0 {
			d.err, d.b = fmt.Errorf("bad presence flag %d", flag), nil
		}
		return 0, false
	}
	n, k := binary.Uvarint(d.b)
	if k <= 0 || n > uint64(len(d.b)) {
		d.err, d.b = io.ErrUnexpectedEOF, nil
		return 0, false
	}
	d.b = d.b[k:]
	return int(n), true
}

func (d *charsetReader) seq(vs []int) {
	prev := 0
	for i := range vs {
		prev += d.num()
		vs[i] = prev
	}
}

func (d *charsetReader) slice() []int {
	n, ok := d.count()
	if !ok {
		return nil
	}
	vs := make([]int, n)
	d.seq(vs)
	return vs
}

func (d *charsetReader) intMap() map[int]int {
	n, ok := d.count()
	if !ok {
		return nil
	}
	keys, vals := make([]int, n), make([]int, n)
	d.seq(keys)
	d.seq(vals)
	m := make(map[int]int, n)
	for i, k := range keys {
		m[k] = vals[i]
	}
	return m
}
`
