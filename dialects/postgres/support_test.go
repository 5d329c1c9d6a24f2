package postgres

import (
	"testing"

	"github.com/schedlock/schedlock/dialects"
)

// sampleVersion is a version of each product for checking the support
// rows against the code.
var sampleVersion = map[string]string{
	dialects.ProductPostgreSQL:  "15.20",
	dialects.ProductKingbase:    "V008R006C007B0024",
	dialects.ProductOpenGauss:   "5.0.0",
	dialects.ProductCockroachDB: "v24.3.0",
	dialects.ProductYugabyteDB:  "2025.1.0.0",
}

// TestSupportRowsMatchTheCode checks what the registered rows (and so
// docs/dialects.md) say against what the code does for an undetected
// server of each product: the recommended strategy, session locks
// refused where the row says no, the claim strategy the facts impose.
func TestSupportRowsMatchTheCode(t *testing.T) {
	rows := 0
	for _, r := range dialects.SupportTable() {
		if r.Dialect != Name {
			continue
		}
		rows++
		info := dialects.Info{Dialect: Name, Product: r.Product, Variant: r.Variant, Version: sampleVersion[r.Product], Banner: "support-row " + r.Name}
		b := backendFor(nil, info, nil)
		if got, why := b.RecommendStrategy(); got != r.Recommended {
			t.Errorf("%s: row recommends %s, RecommendStrategy says %s (%s)", r.Name, r.Recommended, got, why)
		}
		_, err := b.NewSessionLocker(dialects.SessionNames{})
		switch r.Session.Status {
		case dialects.FeatureNo:
			if err == nil {
				t.Errorf("%s: row says no session locks, NewSessionLocker gives one", r.Name)
			}
		case dialects.FeatureYes, dialects.FeatureSomeVersions, dialects.FeatureIfProven:
			if err != nil {
				t.Errorf("%s: row says %s, NewSessionLocker refuses: %v", r.Name, r.Session.Status, err)
			}
		}
		if claim, _ := claimFor(info); claim != "" && claim != r.Claim {
			t.Errorf("%s: row claims %s, the code imposes %s", r.Name, r.Claim, claim)
		}
		if r.Table.Status != dialects.FeatureYes {
			t.Errorf("%s: every PostgreSQL-family product has the table strategy", r.Name)
		}
	}
	if rows != 6 {
		t.Errorf("%d postgres rows, want 6 (PostgreSQL, KingbaseES, openGauss, CockroachDB, YugabyteDB, Aurora PostgreSQL)", rows)
	}
	yb := dialects.Info{Dialect: Name, Product: dialects.ProductYugabyteDB, Version: "2.25.1.0"}
	if s, _ := backendFor(nil, yb, nil).RecommendStrategy(); s != dialects.StrategyTable {
		t.Errorf("YugabyteDB 2.25 is recommended %s; the row says session only from 2025.1", s)
	}
}
