package claim

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"slices"
	"strings"
	"testing"
)

// userTypes are the types whose fields or methods `go doc ./claim TYPE`
// must show: declared here, not aliases, every field and method with its
// contract.
var userTypes = []string{"Request", "Task", "NewTask", "Options", "Result"}

// TestUserTypesShowTheirContract: each of userTypes is a defined type of
// this package (an alias prints only the other package's name) whose
// doc comment and every field or method comment are there.
func TestUserTypesShowTheirContract(t *testing.T) {
	checkDocumentedTypes(t, ".", userTypes)
}

// checkDocumentedTypes checks that dir's package declares each of names as
// a documented struct or interface, not an alias, with a comment on every
// field or method.
func checkDocumentedTypes(t *testing.T, dir string, names []string) {
	t.Helper()
	pkgs, err := parser.ParseDir(token.NewFileSet(), dir, func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for _, pkg := range pkgs {
		for _, f := range pkg.Files {
			for _, decl := range f.Decls {
				gd, ok := decl.(*ast.GenDecl)
				if !ok || gd.Tok != token.TYPE {
					continue
				}
				for _, spec := range gd.Specs {
					ts := spec.(*ast.TypeSpec)
					if !slices.Contains(names, ts.Name.Name) {
						continue
					}
					found[ts.Name.Name] = true
					if ts.Assign.IsValid() {
						t.Errorf("%s is an alias: go doc shows none of its fields", ts.Name.Name)
						continue
					}
					if gd.Doc == nil && ts.Doc == nil {
						t.Errorf("%s has no doc comment", ts.Name.Name)
					}
					var list *ast.FieldList
					switch tt := ts.Type.(type) {
					case *ast.StructType:
						list = tt.Fields
					case *ast.InterfaceType:
						list = tt.Methods
					default:
						t.Errorf("%s is neither a struct nor an interface", ts.Name.Name)
						continue
					}
					for _, field := range list.List {
						if field.Doc == nil && field.Comment == nil {
							t.Errorf("%s.%s has no comment", ts.Name.Name, field.Names)
						}
					}
				}
			}
		}
	}
	for _, n := range names {
		if !found[n] {
			t.Errorf("package declares no type %s", n)
		}
	}
}
