//go:build ignore

// Command gendocs writes the generated documentation. It is a build-ignored
// file, so `go install ./...` installs schedlock alone; run it from the
// repository root with go run and the file name:
//
//	go run scripts/gendocs/main.go            # rewrite docs/dialects.md
//	go run scripts/gendocs/main.go -check     # exit 1 when the page is stale
//	go run scripts/gendocs/main.go -man build/man -completions build/completions \
//	    -version v1.2.3 -date 2025-01-02T03:04:05Z   # what the packages ship
//
// docs/dialects.md comes from the support table the dialect packages
// register; the man pages and the bash, zsh and fish completion scripts
// from the command tree (internal/gendoc). -date (RFC 3339; default
// $SOURCE_DATE_EPOCH, else now) dates the man pages, so a release passes
// its commit date and the same commit gives the same pages.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/schedlock/schedlock/cmd"
	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/docgen"
	"github.com/schedlock/schedlock/internal/gendoc"

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
	out := flag.String("o", docgen.Path, "the dialects page to write")
	check := flag.Bool("check", false, "write nothing; exit 1 when the dialects page differs from what would be written")
	manDir := flag.String("man", "", "also write the man pages into this directory")
	completionDir := flag.String("completions", "", "also write the bash, zsh and fish completion scripts into this directory")
	version := flag.String("version", "dev", "version named in the man pages")
	date := flag.String("date", "", "date of the man pages, RFC 3339 (default $SOURCE_DATE_EPOCH, else now)")
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
		fail(err)
	}
	if *manDir == "" && *completionDir == "" {
		return
	}
	f := cmd.NewFactory()
	root := cmd.NewCmdRoot(f, &cmd.GlobalOptions{})
	if *manDir != "" {
		when, err := pageDate(*date)
		if err != nil {
			fail(err)
		}
		if err := gendoc.ManPages(root, *manDir, *version, when); err != nil {
			fail(err)
		}
	}
	if *completionDir != "" {
		if err := gendoc.Completions(root, *completionDir); err != nil {
			fail(err)
		}
	}
}

// pageDate is -date, else $SOURCE_DATE_EPOCH (reproducible-builds.org),
// else now.
func pageDate(flagValue string) (time.Time, error) {
	if flagValue != "" {
		t, err := time.Parse(time.RFC3339, flagValue)
		if err != nil {
			return time.Time{}, fmt.Errorf("-date: %w", err)
		}
		return t.UTC(), nil
	}
	if epoch := os.Getenv("SOURCE_DATE_EPOCH"); epoch != "" {
		secs, err := strconv.ParseInt(epoch, 10, 64)
		if err != nil {
			return time.Time{}, fmt.Errorf("$SOURCE_DATE_EPOCH: %w", err)
		}
		return time.Unix(secs, 0).UTC(), nil
	}
	return time.Now().UTC(), nil
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "gendocs:", err)
	os.Exit(1)
}
