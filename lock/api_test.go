package lock

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"sort"
	"strings"
	"testing"
)

// maxExported bounds the package's API: the user API stays small, and
// everything else belongs to the authoring kit (package dialects).
const maxExported = 40

// TestExportedIdentifiers counts every exported identifier the package
// declares (types, functions, methods, constants, variables) in its
// non-test files and fails above maxExported.
func TestExportedIdentifiers(t *testing.T) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, pkg := range pkgs {
		for _, f := range pkg.Files {
			for _, decl := range f.Decls {
				switch d := decl.(type) {
				case *ast.FuncDecl:
					if !d.Name.IsExported() {
						continue
					}
					name := d.Name.Name
					if d.Recv != nil && len(d.Recv.List) == 1 {
						recv := d.Recv.List[0].Type
						if star, ok := recv.(*ast.StarExpr); ok {
							recv = star.X
						}
						id, ok := recv.(*ast.Ident)
						if !ok || !id.IsExported() {
							continue // methods of unexported types are not API
						}
						name = id.Name + "." + name
					}
					names = append(names, name)
				case *ast.GenDecl:
					for _, spec := range d.Specs {
						switch s := spec.(type) {
						case *ast.TypeSpec:
							if s.Name.IsExported() {
								names = append(names, s.Name.Name)
							}
						case *ast.ValueSpec:
							for _, n := range s.Names {
								if n.IsExported() {
									names = append(names, n.Name)
								}
							}
						}
					}
				}
			}
		}
	}
	sort.Strings(names)
	t.Logf("%d exported identifiers: %s", len(names), strings.Join(names, ", "))
	if len(names) == 0 {
		t.Fatal("found no exported identifier: the count is not looking at the package")
	}
	if len(names) > maxExported {
		t.Errorf("package lock exports %d identifiers, at most %d are allowed", len(names), maxExported)
	}
}
