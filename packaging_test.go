package main

import (
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// goreleaserConfig is the part of .goreleaser.yaml the packaging rules
// are about.
type goreleaserConfig struct {
	Before struct {
		Hooks []string `yaml:"hooks"`
	} `yaml:"before"`
	Builds []struct {
		Env     []string `yaml:"env"`
		Goos    []string `yaml:"goos"`
		Goarch  []string `yaml:"goarch"`
		Ldflags []string `yaml:"ldflags"`
	} `yaml:"builds"`
	Archives []struct {
		Files []any `yaml:"files"`
	} `yaml:"archives"`
	Nfpms []struct {
		License    string   `yaml:"license"`
		Maintainer string   `yaml:"maintainer"`
		Section    string   `yaml:"section"`
		Formats    []string `yaml:"formats"`
		Contents   []struct {
			Src string `yaml:"src"`
			Dst string `yaml:"dst"`
		} `yaml:"contents"`
	} `yaml:"nfpms"`
}

func TestReleasePackaging(t *testing.T) {
	license, err := os.ReadFile("LICENSE")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(license), "Apache License\n                           Version 2.0, January 2004") || !strings.Contains(string(license), "END OF TERMS AND CONDITIONS") {
		t.Error("LICENSE is not the Apache License 2.0 text")
	}
	raw, err := os.ReadFile(".goreleaser.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cfg goreleaserConfig
	if err := yaml.Unmarshal(raw, &cfg); err != nil {
		t.Fatal(err)
	}
	if len(cfg.Builds) != 1 || len(cfg.Nfpms) != 1 || len(cfg.Archives) != 1 {
		t.Fatalf("want one build, one archive and one nfpm entry: %+v", cfg)
	}
	b := cfg.Builds[0]
	if !slices.Contains(b.Env, "CGO_ENABLED=0") {
		t.Error("release build is not static: no CGO_ENABLED=0")
	}
	for _, os := range []string{"linux", "darwin", "windows"} {
		if !slices.Contains(b.Goos, os) {
			t.Errorf("no %s build", os)
		}
	}
	if !slices.Contains(b.Goarch, "amd64") || !slices.Contains(b.Goarch, "arm64") {
		t.Errorf("goarch %v", b.Goarch)
	}
	ld := strings.Join(b.Ldflags, " ")
	if !strings.Contains(ld, "buildinfo.Date={{ .CommitDate }}") || strings.Contains(ld, "{{ .Date }}") {
		t.Errorf("the build date is not the commit's (reproducible builds): %s", ld)
	}
	n := cfg.Nfpms[0]
	if n.License != "Apache-2.0" {
		t.Errorf("nfpm license %q, LICENSE is Apache-2.0", n.License)
	}
	if !regexp.MustCompile(`^[^<>]+ <[^@<>\s]+@[^@<>\s]+\.[a-z]+>$`).MatchString(n.Maintainer) {
		t.Errorf("nfpm maintainer %q has no address", n.Maintainer)
	}
	if n.Section == "" {
		t.Error("nfpm section is empty")
	}
	dsts := map[string]string{}
	for _, c := range n.Contents {
		dsts[c.Dst] = c.Src
	}
	for _, dst := range []string{
		"/usr/share/man/man1/",
		"/usr/share/bash-completion/completions/schedlock",
		"/usr/share/zsh/vendor-completions/_schedlock",
		"/usr/share/fish/vendor_completions.d/schedlock.fish",
		"/usr/share/doc/schedlock/dialects/",
		"/usr/share/doc/schedlock/copyright",
	} {
		if dsts[dst] == "" {
			t.Errorf("the packages do not install %s", dst)
		}
	}
	// What the packages ship is made by the before hook.
	hooks := strings.Join(cfg.Before.Hooks, "\n")
	for _, want := range []string{"go run scripts/gendocs/main.go", "-man build/man", "-completions build/completions", "-date {{ .CommitDate }}"} {
		if !strings.Contains(hooks, want) {
			t.Errorf("before hooks lack %q:\n%s", want, hooks)
		}
	}
}

// TestGoInstallInstallsOnlySchedlock: `go install ./...` installs the
// main packages of the pattern, so there must be exactly one.
func TestGoInstallInstallsOnlySchedlock(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list; skipped with -short")
	}
	out, err := exec.Command("go", "list", "-f", "{{if eq .Name \"main\"}}{{.ImportPath}}{{end}}", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	mains := strings.Fields(string(out))
	if !slices.Equal(mains, []string{"github.com/schedlock/schedlock"}) {
		t.Errorf("go install ./... would install %v, want only schedlock", mains)
	}
}
