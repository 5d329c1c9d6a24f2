package dialects_test

import (
	"slices"
	"testing"

	"github.com/schedlock/schedlock/dialects"
	_ "github.com/schedlock/schedlock/dialects/all"
)

// TestSupportTableOrdersByFamily: the rows of every linked backend, the
// documented families first (PostgreSQL, MySQL, SQLite, …), each
// backend's rows together and in their own order.
func TestSupportTableOrdersByFamily(t *testing.T) {
	var families []string
	rows := dialects.SupportTable()
	for _, r := range rows {
		if len(families) == 0 || families[len(families)-1] != r.Dialect {
			if slices.Contains(families, r.Dialect) {
				t.Fatalf("the rows of %s are not together: %v then %s", r.Dialect, families, r.Dialect)
			}
			families = append(families, r.Dialect)
		}
	}
	if len(families) < 3 || families[0] != "postgres" || families[1] != "mysql" || families[2] != "sqlite" {
		t.Fatalf("families %v; want postgres, mysql, sqlite first", families)
	}
	pg, _ := dialects.Lookup("postgres")
	for i, r := range pg.Support {
		if rows[i].Product != r.Product || rows[i].Variant != r.Variant {
			t.Fatalf("row %d is %s/%s; want PostgreSQL's rows in their own order (%s/%s)", i, rows[i].Product, rows[i].Variant, r.Product, r.Variant)
		}
	}
}
