// Package gendoc writes what the release packages ship beside the binary:
// a man page per command and the shell completion scripts, both generated
// from the command tree so they never disagree with --help. The generator
// is scripts/gendocs/main.go; .goreleaser.yaml runs it before building.
package gendoc

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// Completion files, by shell, as the Debian and Fedora packages install
// them: /usr/share/bash-completion/completions/schedlock,
// /usr/share/zsh/vendor-completions/_schedlock,
// /usr/share/fish/vendor_completions.d/schedlock.fish.
var CompletionFiles = map[string]string{
	"bash": "schedlock",
	"zsh":  "_schedlock",
	"fish": "schedlock.fish",
}

// ManPages writes a section-1 man page for root and every available
// command below it into dir (schedlock.1, schedlock-selfcheck.1,
// schedlock-locks-ls.1, …), dated date so the same commit gives the same
// pages.
func ManPages(root *cobra.Command, dir, version string, date time.Time) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("man pages: %w", err)
	}
	root.DisableAutoGenTag = true // no generation date in the text
	header := &doc.GenManHeader{Title: "SCHEDLOCK", Section: "1", Date: &date, Source: "schedlock " + version, Manual: "schedlock manual"}
	if err := doc.GenManTree(root, header, dir); err != nil {
		return fmt.Errorf("man pages: %w", err)
	}
	return nil
}

// Completions writes the bash, zsh and fish completion scripts of root
// into dir, named as CompletionFiles says.
func Completions(root *cobra.Command, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("completions: %w", err)
	}
	write := map[string]func(string) error{
		"bash": func(p string) error { return root.GenBashCompletionFileV2(p, true) },
		"zsh":  root.GenZshCompletionFile,
		"fish": func(p string) error { return root.GenFishCompletionFile(p, true) },
	}
	for shell, name := range CompletionFiles {
		if err := write[shell](filepath.Join(dir, name)); err != nil {
			return fmt.Errorf("%s completion: %w", shell, err)
		}
	}
	return nil
}
