// Command gendocs writes docs/dialects.md from the support table that the
// dialect packages register. Run it from the repository root:
//
//	go run ./scripts/gendocs           # rewrite docs/dialects.md
//	go run ./scripts/gendocs -check    # exit 1 when the page is stale
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"

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

func main() {
	out := flag.String("o", docgen.Path, "the file to write")
	check := flag.Bool("check", false, "write nothing; exit 1 when the file differs from what would be written")
	flag.Parse()

	page := docgen.Markdown(dialects.SupportTable())
	if *check {
		current, err := os.ReadFile(*out)
		if err != nil || !bytes.Equal(current, page) {
			fmt.Fprintf(os.Stderr, "%s is stale: run %s\n", *out, docgen.Command)
			os.Exit(1)
		}
		return
	}
	if err := os.WriteFile(*out, page, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "gendocs:", err)
		os.Exit(1)
	}
}
