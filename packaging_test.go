package main

import (
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/schedlock/schedlock/cmd"
	"github.com/schedlock/schedlock/internal/gendoc"
)

// goreleaserConfig is the part of .goreleaser.yaml the packaging rules
// are about.
type goreleaserConfig struct {
	Before struct {
		Hooks []string `yaml:"hooks"`
	} `yaml:"before"`
	Builds []struct {
		ID      string   `yaml:"id"`
		Binary  string   `yaml:"binary"`
		Env     []string `yaml:"env"`
		Flags   []string `yaml:"flags"`
		Goos    []string `yaml:"goos"`
		Goarch  []string `yaml:"goarch"`
		Ldflags []string `yaml:"ldflags"`
	} `yaml:"builds"`
	Archives []struct {
		Formats []string `yaml:"formats"`
		Files   []any    `yaml:"files"`
	} `yaml:"archives"`
	DockersV2 []struct {
		IDs        []string `yaml:"ids"`
		Dockerfile string   `yaml:"dockerfile"`
		Images     []string `yaml:"images"`
		Platforms  []string `yaml:"platforms"`
		ExtraFiles []string `yaml:"extra_files"`
	} `yaml:"dockers_v2"`
	HomebrewCasks []struct {
		IDs         []string          `yaml:"ids"`
		Binaries    []string          `yaml:"binaries"`
		Manpages    []string          `yaml:"manpages"`
		Completions map[string]string `yaml:"completions"`
	} `yaml:"homebrew_casks"`
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

// readGoreleaser parses .goreleaser.yaml.
func readGoreleaser(t *testing.T) goreleaserConfig {
	t.Helper()
	raw, err := os.ReadFile(".goreleaser.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cfg goreleaserConfig
	if err := yaml.Unmarshal(raw, &cfg); err != nil {
		t.Fatal(err)
	}
	if len(cfg.Builds) != 1 {
		t.Fatalf("want one build in .goreleaser.yaml, got %d", len(cfg.Builds))
	}
	return cfg
}

func TestReleasePackaging(t *testing.T) {
	license, err := os.ReadFile("LICENSE")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(license), "Apache License\n                           Version 2.0, January 2004") || !strings.Contains(string(license), "END OF TERMS AND CONDITIONS") {
		t.Error("LICENSE is not the Apache License 2.0 text")
	}
	cfg := readGoreleaser(t)
	if len(cfg.Nfpms) != 1 || len(cfg.Archives) != 1 {
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
		"/usr/share/schedlock/monitoring/",
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

// buildScriptCommand runs scripts/build.sh with a stand-in `go` first on
// PATH and returns the go command line the script would run, CGO_ENABLED
// first ("CGO_ENABLED=0 build -trimpath …").
func buildScriptCommand(t *testing.T) []string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("scripts/build.sh is a bash script")
	}
	dir := t.TempDir()
	record := filepath.Join(dir, "go-args")
	shim := "#!/bin/sh\nprintf '%s\\n' \"CGO_ENABLED=$CGO_ENABLED\" \"$@\" > " + record + "\n"
	if err := os.WriteFile(filepath.Join(dir, "go"), []byte(shim), 0o755); err != nil {
		t.Fatal(err)
	}
	c := exec.Command("bash", "scripts/build.sh")
	c.Env = append(os.Environ(), "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"),
		"VERSION=v1.2.3", "COMMIT=abc1234", "DATE=2025-01-02T03:04:05Z", "OUT="+filepath.Join(dir, "schedlock"))
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("scripts/build.sh: %v\n%s", err, out)
	}
	raw, err := os.ReadFile(record)
	if err != nil {
		t.Fatalf("scripts/build.sh ran no go command: %v", err)
	}
	return strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
}

// ldflagSet is an -ldflags value as a set, with each -X reduced to the
// variable it sets: {"-s", "-w", "-X github.com/…/buildinfo.Version", …}.
// goreleaser's templates ({{ .Version }}) count as one word.
func ldflagSet(ldflags string) map[string]bool {
	set := map[string]bool{}
	fields := strings.Fields(regexp.MustCompile(`\{\{[^}]*\}\}`).ReplaceAllString(ldflags, "T"))
	for i := 0; i < len(fields); i++ {
		if fields[i] == "-X" && i+1 < len(fields) {
			name, _, _ := strings.Cut(fields[i+1], "=")
			set["-X "+name] = true
			i++
			continue
		}
		set[fields[i]] = true
	}
	return set
}

// TestReleaseBuildIsBuildScript: goreleaser builds the release binaries
// as scripts/build.sh builds bin/schedlock: static, the same go build
// flags (build tags included), the same -ldflags and the same stamped
// variables. The script is run (with a stand-in go), not read.
func TestReleaseBuildIsBuildScript(t *testing.T) {
	cfg := readGoreleaser(t)
	b := cfg.Builds[0]
	args := buildScriptCommand(t)
	if args[0] != "CGO_ENABLED=0" || !slices.Contains(b.Env, "CGO_ENABLED=0") {
		t.Errorf("not both static: scripts/build.sh runs go with %s, goreleaser's env is %v", args[0], b.Env)
	}
	if len(args) < 2 || args[1] != "build" {
		t.Fatalf("scripts/build.sh runs go %v, not go build", args[1:])
	}
	var scriptFlags []string
	var scriptLdflags string
	for i := 2; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-ldflags" && i+1 < len(args):
			scriptLdflags = args[i+1]
			i++
		case a == "-o" && i+1 < len(args):
			i++
		case a == "-tags" && i+1 < len(args):
			scriptFlags = append(scriptFlags, "-tags="+args[i+1])
			i++
		case strings.HasPrefix(a, "-"):
			scriptFlags = append(scriptFlags, a)
		}
	}
	slices.Sort(scriptFlags)
	// The go.mod of -modfile (go-ora with compressed tables) is written by
	// a before hook of the release, as by the script before it builds.
	for _, f := range b.Flags {
		if dir, ok := strings.CutPrefix(f, "-modfile="); ok {
			want := "go run scripts/oracharsets/main.go -out " + strings.TrimSuffix(dir, "/go.mod")
			if !slices.Contains(cfg.Before.Hooks, want) {
				t.Errorf("the release builds with %s, but no before hook runs %q", f, want)
			}
		}
	}
	releaseFlags := slices.Sorted(slices.Values(b.Flags))
	if !slices.Equal(scriptFlags, releaseFlags) {
		t.Errorf("go build flags differ: scripts/build.sh %v, .goreleaser.yaml %v", scriptFlags, releaseFlags)
	}
	script, release := ldflagSet(scriptLdflags), ldflagSet(strings.Join(b.Ldflags, " "))
	if !maps.Equal(script, release) {
		t.Errorf("-ldflags differ: scripts/build.sh %v, .goreleaser.yaml %v", slices.Sorted(maps.Keys(script)), slices.Sorted(maps.Keys(release)))
	}
	for _, want := range []string{"-s", "-w", "-X github.com/schedlock/schedlock/internal/buildinfo.Version"} {
		if !script[want] {
			t.Errorf("scripts/build.sh -ldflags %q lacks %s", scriptLdflags, want)
		}
	}
	if !strings.Contains(scriptLdflags, "buildinfo.Version=v1.2.3") {
		t.Errorf("scripts/build.sh does not stamp $VERSION: %q", scriptLdflags)
	}
}

// dockerInstruction is one instruction of a Dockerfile: its keyword in
// upper case and the rest of the line.
type dockerInstruction struct{ op, args string }

// readDockerfile parses a Dockerfile into instructions: comments and
// blank lines dropped, continued lines joined.
func readDockerfile(t *testing.T, path string) []dockerInstruction {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []dockerInstruction
	line := ""
	for _, l := range strings.Split(string(raw), "\n") {
		if trimmed := strings.TrimSpace(l); trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		if cont, ok := strings.CutSuffix(l, "\\"); ok {
			line += cont + " "
			continue
		}
		line += l
		op, args, _ := strings.Cut(strings.TrimSpace(line), " ")
		out = append(out, dockerInstruction{strings.ToUpper(op), strings.TrimSpace(args)})
		line = ""
	}
	return out
}

// TestContainerImage: the image goreleaser builds is the static binary on
// an empty base, and the Dockerfile only copies what goreleaser puts in
// its build context: $TARGETPLATFORM/<binary> for each platform and the
// extra_files. On scratch there is no shell and no /etc/passwd, so the
// entrypoint must be exec form and the user numeric.
func TestContainerImage(t *testing.T) {
	cfg := readGoreleaser(t)
	if len(cfg.DockersV2) != 1 {
		t.Fatalf("want one dockers_v2 entry, got %d", len(cfg.DockersV2))
	}
	d, b := cfg.DockersV2[0], cfg.Builds[0]
	if !slices.Contains(b.Env, "CGO_ENABLED=0") {
		t.Error("the image's binary must be static: no CGO_ENABLED=0 in the build")
	}
	if !slices.Contains(d.IDs, b.ID) {
		t.Errorf("dockers_v2 ids %v do not take build %q", d.IDs, b.ID)
	}
	if len(d.Images) == 0 || len(d.Platforms) == 0 {
		t.Fatalf("dockers_v2 names no image or no platform: %+v", d)
	}
	for _, p := range d.Platforms {
		goos, goarch, _ := strings.Cut(p, "/")
		if !slices.Contains(b.Goos, goos) || !slices.Contains(b.Goarch, goarch) {
			t.Errorf("image platform %s is not built (goos %v, goarch %v)", p, b.Goos, b.Goarch)
		}
	}
	inContext := map[string]bool{}
	for _, f := range d.ExtraFiles {
		// goreleaser copies an extra file to the same path inside the
		// context, an absolute one below its root.
		inContext[strings.TrimPrefix(f, "/")] = true
	}

	ins := readDockerfile(t, d.Dockerfile)
	var froms, copies []string
	var user, entrypoint string
	args := map[string]bool{}
	for _, in := range ins {
		switch in.op {
		case "FROM":
			froms = append(froms, in.args)
		case "ARG":
			args[in.args] = true
		case "COPY", "ADD":
			copies = append(copies, in.args)
		case "USER":
			user = in.args
		case "ENTRYPOINT":
			entrypoint = in.args
		case "RUN":
			t.Errorf("RUN %s: a scratch image has no shell to run it", in.args)
		}
	}
	if !slices.Equal(froms, []string{"scratch"}) {
		t.Errorf("FROM %v, want one stage FROM scratch", froms)
	}
	binarySrc := "$TARGETPLATFORM/" + b.Binary
	binaryDst := ""
	for _, c := range copies {
		fields := strings.Fields(c)
		if len(fields) != 2 || strings.HasPrefix(fields[0], "--") {
			t.Errorf("COPY %s: want COPY SRC DST", c)
			continue
		}
		switch src := fields[0]; {
		case src == binarySrc:
			binaryDst = fields[1]
			if !args["TARGETPLATFORM"] {
				t.Error("COPY uses $TARGETPLATFORM without ARG TARGETPLATFORM")
			}
		case !inContext[src]:
			t.Errorf("COPY %s: not in goreleaser's build context (extra_files %v)", src, d.ExtraFiles)
		}
	}
	if binaryDst == "" {
		t.Fatalf("the Dockerfile does not copy %s (COPY lines %v)", binarySrc, copies)
	}
	if !slices.ContainsFunc(copies, func(c string) bool {
		return strings.HasSuffix(c, " /etc/ssl/certs/ca-certificates.crt")
	}) {
		t.Error("no CA bundle at /etc/ssl/certs/ca-certificates.crt: TLS DSNs could not verify a server")
	}
	var exec []string
	if err := json.Unmarshal([]byte(entrypoint), &exec); err != nil || len(exec) == 0 {
		t.Fatalf("ENTRYPOINT %s: want exec form [\"/path\"] (no shell on scratch): %v", entrypoint, err)
	}
	if exec[0] != binaryDst {
		t.Errorf("ENTRYPOINT runs %s, the binary is copied to %s", exec[0], binaryDst)
	}
	if !regexp.MustCompile(`^[1-9][0-9]*(:[0-9]+)?$`).MatchString(user) {
		t.Errorf("USER %q: want a numeric non-root user (scratch has no /etc/passwd)", user)
	}
}

// TestHomebrewCask: the cask installs the binary, man page and
// completions from where the archives hold them. The man pages and
// completion scripts are generated here as the before hook does, and laid
// out as the archives' files entries say.
func TestHomebrewCask(t *testing.T) {
	cfg := readGoreleaser(t)
	if len(cfg.HomebrewCasks) != 1 {
		t.Fatalf("want one homebrew_casks entry, got %d", len(cfg.HomebrewCasks))
	}
	c, b := cfg.HomebrewCasks[0], cfg.Builds[0]
	if !slices.Contains(c.IDs, b.ID) {
		t.Errorf("cask ids %v do not take build %q", c.IDs, b.ID)
	}
	if !slices.Equal(c.Binaries, []string{b.Binary}) {
		t.Errorf("cask binaries %v, the build makes %q", c.Binaries, b.Binary)
	}
	if !slices.Contains(cfg.Archives[0].Formats, "tar.gz") {
		t.Errorf("a cask installs from the tar.gz archives; formats %v", cfg.Archives[0].Formats)
	}

	dir := t.TempDir()
	root := cmd.NewCmdRoot(cmd.NewFactory(), &cmd.GlobalOptions{})
	if err := gendoc.ManPages(root, filepath.Join(dir, "build", "man"), "v1.2.3", time.Unix(0, 0)); err != nil {
		t.Fatal(err)
	}
	if err := gendoc.Completions(root, filepath.Join(dir, "build", "completions")); err != nil {
		t.Fatal(err)
	}
	inArchive := map[string]bool{}
	for _, f := range cfg.Archives[0].Files {
		entry, ok := f.(map[string]any)
		if !ok {
			continue
		}
		src, _ := entry["src"].(string)
		dst, _ := entry["dst"].(string)
		matches, err := filepath.Glob(filepath.Join(dir, src))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range matches {
			inArchive[dst+"/"+filepath.Base(m)] = true
		}
	}
	want := append([]string{}, c.Manpages...)
	for _, shell := range []string{"bash", "zsh", "fish"} {
		if c.Completions[shell] == "" {
			t.Errorf("the cask installs no %s completion", shell)
		}
		want = append(want, c.Completions[shell])
	}
	if !slices.Contains(c.Manpages, "man/"+b.Binary+".1") {
		t.Errorf("the cask installs no man/%s.1: %v", b.Binary, c.Manpages)
	}
	for _, p := range want {
		if !inArchive[p] {
			t.Errorf("the cask installs %s, the archive holds %v", p, slices.Sorted(maps.Keys(inArchive)))
		}
	}
}
