package dialects

import (
	"slices"
	"strings"
	"testing"
)

// restoreSupportAtEnd puts the support table back as it was when the test
// ends, so the rows a test registers do not outlive it (go test -count=N
// runs it again in the same process).
func restoreSupportAtEnd(t *testing.T) {
	t.Helper()
	supportMu.Lock()
	saved := slices.Clone(supportRows)
	supportMu.Unlock()
	t.Cleanup(func() {
		supportMu.Lock()
		supportRows = saved
		supportMu.Unlock()
	})
}

func TestRegisterSupportOrdersByFamily(t *testing.T) {
	restoreSupportAtEnd(t)
	RegisterSupport(
		ProductSupport{Dialect: "zz-test-b", Product: "b1", Name: "B1"},
		ProductSupport{Dialect: "zz-test-a", Product: "a1", Name: "A1"},
		ProductSupport{Dialect: "zz-test-a", Product: "a2", Name: "A2"},
	)
	RegisterSupport(ProductSupport{Dialect: "sqlite", Product: "zz-test-sqlite", Name: "S"})
	var got []string
	for _, r := range SupportTable() {
		if strings.HasPrefix(r.Dialect, "zz-test") || r.Product == "zz-test-sqlite" {
			got = append(got, r.Name)
		}
	}
	if strings.Join(got, ",") != "S,A1,A2,B1" {
		t.Errorf("order = %v; want the known family first, then other dialects by name, rows in registration order", got)
	}
	if r, ok := SupportFor("a2", "aurora"); !ok || r.Name != "A2" {
		t.Errorf("SupportFor falls back to the variant-less row: %+v, %v", r, ok)
	}
}

func TestRegisterSupportRefusesBadRows(t *testing.T) {
	restoreSupportAtEnd(t)
	for name, row := range map[string]ProductSupport{
		"no dialect": {Product: "p", Name: "P"},
		"no name":    {Dialect: "zz-test-c", Product: "p"},
		"duplicate":  {Dialect: "zz-test-dup", Product: "p", Name: "P"},
	} {
		if name == "duplicate" {
			RegisterSupport(row)
		}
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: RegisterSupport did not panic", name)
				}
			}()
			RegisterSupport(row)
		}()
	}
}
