package benchops_test

import (
	"os/exec"
	"strings"
	"testing"
)

// goList runs go list with args and returns its output's fields.
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

// The contract links nothing but the standard library, and the lock
// stores, which give their raw commands through it, link neither the
// bench harness nor the SQL kit it needs: a program that opens a store for
// its locks carries no bench.
func TestContractLinksNoHarness(t *testing.T) {
	const self = "github.com/schedlock/schedlock/dialects/benchops"
	if deps := goList(t, "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", self); len(deps) != 1 || deps[0] != self {
		t.Errorf("benchops links %v, want the standard library alone", deps)
	}
	for _, store := range []string{"redis", "etcd", "zookeeper", "memory"} {
		pkg := "github.com/schedlock/schedlock/dialects/" + store
		for _, dep := range goList(t, "-deps", pkg) {
			switch dep {
			case "github.com/schedlock/schedlock/internal/benchkit", "github.com/schedlock/schedlock/dialects/sqlkit":
				t.Errorf("%s links %s", pkg, dep)
			}
		}
	}
}
