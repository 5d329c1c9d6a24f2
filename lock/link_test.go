package lock_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// libraryPackages are the packages a program imports to use schedlock as
// a library.
var libraryPackages = []string{
	"github.com/schedlock/schedlock/lock",
	"github.com/schedlock/schedlock/lock/cronlock",
	"github.com/schedlock/schedlock/lock/gocronlock",
	"github.com/schedlock/schedlock/claim",
}

// libsizeProgram is the smallest library program: lock and
// dialects/postgres (scripts/size.sh --library measures it).
const libsizeProgram = "../scripts/libsize/main.go"

// maxLibraryModules bounds the modules that program links, schedlock's
// own module included (as go list prints them; the standard library is
// none). docs/install.md states the figure.
const maxLibraryModules = 10

// goList runs go list with args and returns its output's lines.
func goList(t *testing.T, args ...string) []string {
	t.Helper()
	out, err := exec.Command("go", append([]string{"list"}, args...)...).Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("go list %s: %v\n%s", strings.Join(args, " "), err, stderr)
	}
	return strings.Fields(string(out))
}

// TestLibraryLinksNoBackend: the library packages import no backend —
// none of the packages dialects/all imports, nor dialects/all, nor the
// bench harness — so a program links only the backends it imports.
func TestLibraryLinksNoBackend(t *testing.T) {
	backends := goList(t, "-f", `{{join .Imports " "}}`, "github.com/schedlock/schedlock/dialects/all")
	if len(backends) < 5 {
		t.Fatalf("dialects/all imports %v: the list is not looking at the backends", backends)
	}
	forbidden := append(backends, "github.com/schedlock/schedlock/dialects/all", "github.com/schedlock/schedlock/internal/benchkit")
	for _, pkg := range libraryPackages {
		deps := goList(t, append([]string{"-deps"}, pkg)...)
		if !slices.Contains(deps, "github.com/schedlock/schedlock/dialects") {
			t.Fatalf("go list -deps %s lacks package dialects: %v", pkg, deps)
		}
		for _, dep := range deps {
			if slices.Contains(forbidden, dep) {
				t.Errorf("%s links %s", pkg, dep)
			}
		}
	}
}

// TestLibraryProgram: the program of scripts/libsize, importing lock and
// dialects/postgres, links at most maxLibraryModules modules; built, it
// refuses the DSN of a backend it does not link — a store whose scheme
// only that backend teaches dburl, a SQL database dburl knows — with one
// line naming the import to add.
func TestLibraryProgram(t *testing.T) {
	mods := goList(t, "-deps", "-f", "{{with .Module}}{{.Path}}{{end}}", libsizeProgram)
	slices.Sort(mods)
	mods = slices.Compact(mods)
	t.Logf("%d modules: %s", len(mods), strings.Join(mods, " "))
	if !slices.Contains(mods, "github.com/jackc/pgx/v5") {
		t.Fatalf("the program does not link pgx: %v", mods)
	}
	if len(mods) > maxLibraryModules {
		t.Errorf("a program of lock and dialects/postgres links %d modules, more than %d: %v", len(mods), maxLibraryModules, mods)
	}

	if testing.Short() {
		t.Skip("builds the program; skipped with -short")
	}
	bin := filepath.Join(t.TempDir(), "libsize")
	build := exec.Command("go", "build", "-o", bin, libsizeProgram)
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for dsn, want := range map[string]string{
		"redis://127.0.0.1:1/0":     `schedlock: no backend linked for "redis://": add import _ "github.com/schedlock/schedlock/dialects/redis"`,
		"etcds://127.0.0.1:1/jobs":  `schedlock: no backend linked for "etcds://": add import _ "github.com/schedlock/schedlock/dialects/etcd"`,
		"zk://127.0.0.1:1/locks":    `schedlock: no backend linked for "zk://": add import _ "github.com/schedlock/schedlock/dialects/zookeeper"`,
		"mariadb://app@127.0.0.1/j": `schedlock: no backend linked for "mariadb://": add import _ "github.com/schedlock/schedlock/dialects/mysql"`,
		"/var/lib/app/locks.db":     `schedlock: no backend linked for ".db" files: add import _ "github.com/schedlock/schedlock/dialects/sqlite"`,
	} {
		run := exec.Command(bin)
		run.Env = append(os.Environ(), "DATABASE_URL="+dsn)
		out, err := run.CombinedOutput()
		if got := strings.TrimSuffix(string(out), "\n"); err == nil || got != want {
			t.Errorf("DATABASE_URL=%s: %v, output %q; want %q", dsn, err, out, want)
		}
	}
}
