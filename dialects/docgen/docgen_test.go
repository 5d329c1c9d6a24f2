package docgen_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/docgen"

	// Every dialect by name as well as dialects/all, so the page does not
	// depend on the no_<dialect> build tags that leave dialects out of a
	// build.
	_ "github.com/schedlock/schedlock/dialects/all"
	_ "github.com/schedlock/schedlock/dialects/dameng"
	_ "github.com/schedlock/schedlock/dialects/mysql"
	_ "github.com/schedlock/schedlock/dialects/oracle"
	_ "github.com/schedlock/schedlock/dialects/postgres"
	_ "github.com/schedlock/schedlock/dialects/sqlite"
	_ "github.com/schedlock/schedlock/dialects/sqlserver"
)

// TestDialectsDocIsCurrent fails while docs/dialects.md differs from what
// the support table of this build generates.
func TestDialectsDocIsCurrent(t *testing.T) {
	path := filepath.Join("..", "..", filepath.FromSlash(docgen.Path))
	current, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v: generate it with %s", err, docgen.Command)
	}
	want := docgen.Markdown(dialects.SupportTable())
	if !bytes.Equal(current, want) {
		t.Fatalf("%s is stale: regenerate it with %s (from the repository root) and commit the result\nfirst difference: %s",
			docgen.Path, docgen.Command, firstDiff(string(current), string(want)))
	}
}

// TestEveryDialectHasSupportRows makes sure no registered dialect is
// missing from the page.
func TestEveryDialectHasSupportRows(t *testing.T) {
	rows := dialects.SupportTable()
	for _, name := range dialects.Names() {
		found := false
		for _, r := range rows {
			found = found || r.Dialect == name
		}
		if !found {
			t.Errorf("dialect %s registers no support rows (Dialect.Support)", name)
		}
	}
	for _, r := range rows {
		if r.Versions == "" || r.Session.Status == "" || r.Table.Status == "" || r.Recommended == "" || r.Verified == "" {
			t.Errorf("row %s lacks versions, strategies, recommendation or verification: %+v", r.Name, r)
		}
	}
}

func TestMarkdownEscapesAndLinks(t *testing.T) {
	rows := []dialects.ProductSupport{{
		Dialect: "x", Product: "xdb", Name: "X DB", Versions: "1 | 2",
		Session:     dialects.Feature{Status: dialects.FeatureNo, Detail: "none"},
		Table:       dialects.Feature{Status: dialects.FeatureYes, Detail: "a\nb"},
		Recommended: dialects.StrategyTable, Verified: dialects.VerifiedGolden,
		Privileges: []string{"CREATE"},
	}}
	page := string(docgen.Markdown(rows))
	for _, want := range []string{
		"| [X DB](#x-db) | 1 \\| 2 | no | yes | table | — | — | — | golden SQL only |",
		"\n## X DB\n",
		"- **Table strategy**: **yes** — a b\n",
		"- **Privileges**:\n  - CREATE\n",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q:\n%s", want, page)
		}
	}
}

func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) || i < len(bl); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return "line " + strconv.Itoa(i+1) + ":\n  file:      " + x + "\n  generated: " + y
		}
	}
	return "(none)"
}
