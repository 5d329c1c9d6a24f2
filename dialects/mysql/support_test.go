package mysql

import (
	"testing"

	"github.com/schedlock/schedlock/dialects"
)

// TestSupportRowsMatchTheCode checks the registered rows against the code
// for a current version of each product.
func TestSupportRowsMatchTheCode(t *testing.T) {
	samples := map[string]dialects.Info{
		"MySQL":        ParseVersion("8.0.36", "MySQL Community Server - GPL"),
		"MariaDB":      ParseVersion("10.11.19-MariaDB-0+deb12u1", "Debian 12"),
		"TiDB":         ParseVersion("8.0.11-TiDB-v8.5.6", ""),
		"Aurora MySQL": {Dialect: Name, Product: dialects.ProductMySQL, Variant: VariantAurora, Version: "8.0.32"},
	}
	rows := 0
	for _, r := range dialects.SupportTable() {
		if r.Dialect != Name {
			continue
		}
		rows++
		info, ok := samples[r.Name]
		if !ok {
			t.Errorf("no sample server for row %s", r.Name)
			continue
		}
		if info.Product != r.Product || info.Variant != r.Variant {
			t.Errorf("row %s is %s/%s, its sample detects as %s/%s", r.Name, r.Product, r.Variant, info.Product, info.Variant)
		}
		if got, why := Recommend(info); got != r.Recommended {
			t.Errorf("%s: row recommends %s, Recommend says %s (%s)", r.Name, r.Recommended, got, why)
		}
		_, err := NewSessionLocker(nil, &SessionOps{Info: info})
		if (r.Session.Status == dialects.FeatureNo) != (err != nil) {
			t.Errorf("%s: row says session %s, NewSessionLocker error %v", r.Name, r.Session.Status, err)
		}
		if claim, _ := claimFor(info); claim != "" && claim != r.Claim {
			t.Errorf("%s: row claims %s, the code imposes %s", r.Name, r.Claim, claim)
		}
	}
	if rows != len(samples) {
		t.Errorf("%d mysql rows, want %d", rows, len(samples))
	}
}
