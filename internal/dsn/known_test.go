package dsn

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/xo/dburl"

	"github.com/schedlock/schedlock/dialects"
)

// TestKnownBackends holds the table of known backends to what
// dialects/all links (registry_test.go imports it): the same packages;
// each entry's package declares that Name; every URL scheme a linked
// backend answers to — its entry's schemes, every dburl alias of them
// (those it registers itself included) and how its DSNs begin — is in its
// row and no other; every scheme of a row means that backend; its file
// extensions are the entry's.
func TestKnownBackends(t *testing.T) {
	root := filepath.Join("..", "..")
	imports := allImports(t, filepath.Join(root, "dialects", "all"))
	var want []string
	for _, b := range knownBackends {
		want = append(want, b.importPath())
	}
	slices.Sort(want)
	if !slices.Equal(imports, want) {
		t.Errorf("dialects/all imports %v; the known backends are %v", imports, want)
	}

	for _, b := range knownBackends {
		if got := declaredName(t, filepath.Join(root, strings.TrimPrefix(b.importPath(), "github.com/schedlock/schedlock/"))); got != b.name {
			t.Errorf("%s declares Name %q, the table says %q", b.importPath(), got, b.name)
		}
		d, ok := dialects.Lookup(b.name)
		if !ok {
			t.Errorf("%s is in the table but dialects/all registers no such backend", b.name)
			continue
		}
		var answers []string // every scheme d answers to
		for _, s := range d.Schemes {
			answers = append(answers, s.Name)
			answers = append(answers, dburl.Protocols(s.Name)...)
		}
		for _, start := range d.Starts {
			if scheme, _, ok := strings.Cut(start, ":"); ok {
				answers = append(answers, scheme)
			}
		}
		for _, s := range answers {
			if got, ok := knownByScheme(s); !ok || got.name != b.name {
				t.Errorf("%s answers to %s://, which the table gives to %q", b.name, s, got.name)
			}
		}
		for _, s := range b.schemes {
			if !slices.Contains(answers, s) {
				t.Errorf("the table gives %s:// to %s, which does not answer to it", s, b.name)
			}
		}
		var exts []string
		if d.Files != nil {
			exts = d.Files.Extensions
		}
		if !slices.Equal(exts, b.exts) {
			t.Errorf("%s opens the file extensions %v, the table says %v", b.name, exts, b.exts)
		}
	}
	for _, name := range dialects.Names() {
		if _, ok := knownByName(name); !ok {
			t.Errorf("dialects/all registers %s, which the table of known backends (knownBackends in known.go) lacks", name)
		}
	}
}

// allImports returns the sorted import paths of the Go files in dir.
func allImports(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files in %s: %v", dir, err)
	}
	var paths []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range file.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			paths = append(paths, p)
		}
	}
	slices.Sort(paths)
	return slices.Compact(paths)
}

// declaredName returns the value of the constant Name the package in dir
// declares.
func declaredName(t *testing.T, dir string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		file, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, e.Name()), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range file.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if n.Name != "Name" || i >= len(vs.Values) {
						continue
					}
					if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
						v, _ := strconv.Unquote(lit.Value)
						return v
					}
				}
			}
		}
	}
	t.Fatalf("%s declares no const Name", dir)
	return ""
}

// TestNotLinked: a DSN whose backend this module provides but the program
// does not link fails in one line naming the import to add, whichever way
// it is written — a scheme only the backend teaches dburl, one dburl knows,
// a key=value DSN, a database file — and matches ErrUnsupported. The test
// binary links every backend, so a row of the table stands for one that
// is not linked.
func TestNotLinked(t *testing.T) {
	saved := knownBackends
	t.Cleanup(func() { knownBackends = saved })
	knownBackends = append(slices.Clone(saved),
		knownBackend{name: "zz-unlinked-store", schemes: []string{"zzstore"}},
		knownBackend{name: "zz-unlinked-sql", schemes: []string{"clickhouse"}, exts: []string{".zzdb"}},
		knownBackend{name: "zz-unlinked-aws", schemes: []string{"snowflake"}},
	)
	cases := []struct{ dsn, want string }{
		{"zzstore://:s3cr3t@h:1/0", `no backend linked for "zzstore://": add import _ "github.com/schedlock/schedlock/dialects/zz-unlinked-store"`},
		{"ZZSTORE://h/0", `no backend linked for "zzstore://"`},
		{"clickhouse://app:s3cr3t@h/db", `no backend linked for "clickhouse://": add import _ "github.com/schedlock/schedlock/dialects/zz-unlinked-sql"`},
		{"/tmp/jobs.zzdb", `no backend linked for ".zzdb" files: add import _ "github.com/schedlock/schedlock/dialects/zz-unlinked-sql"`},
		// dburl knows the scheme, and its rules for it (user and password
		// required) refuse what the backend accepts (dynamodb://REGION/T).
		{"snowflake://acct/db", `no backend linked for "snowflake://": add import _ "github.com/schedlock/schedlock/dialects/zz-unlinked-aws"`},
	}
	for _, tc := range cases {
		_, err := Parse(tc.dsn)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") || strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("Parse(%q) = %v; want one line with %s", tc.dsn, err, tc.want)
		}
		var nl *NotLinkedError
		if !errors.As(err, &nl) || !errors.Is(err, dialects.ErrUnsupported) {
			t.Errorf("Parse(%q) error %v is no *NotLinkedError matching ErrUnsupported", tc.dsn, err)
		}
	}
	if _, err := entryFor("zz-unlinked-sql"); err == nil || err.Error() != `no backend linked for zz-unlinked-sql DSNs: add import _ "github.com/schedlock/schedlock/dialects/zz-unlinked-sql"` {
		t.Errorf("entryFor of an unlinked known backend: %v", err)
	}
	// A scheme nobody knows lists the linked backends' forms.
	if _, err := Parse("nosuch://h/db"); err == nil || !strings.Contains(err.Error(), `unknown scheme "nosuch": use postgres://`) {
		t.Errorf("Parse of an unknown scheme: %v", err)
	}
}
