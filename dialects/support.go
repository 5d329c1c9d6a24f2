package dialects

import (
	"fmt"
)

// ProductSupport is what schedlock does on one product (and range of
// versions) and how this repository's tests prove it. Dialect packages
// give their rows in their Dialect's Support; docs/dialects.md is generated
// from SupportTable (go run scripts/gendocs/main.go), so the documentation says
// what the code's own data says.
//
// Text fields are Markdown fragments on one line: code in backticks, no
// table pipes.
type ProductSupport struct {
	// Dialect is the registry name of the dialect that handles the product.
	Dialect string
	// Product is the detected Info.Product ("postgresql", "kingbase", …).
	Product string
	// Variant is the detected Info.Variant ("aurora", "azure"), or "".
	Variant string
	// Name is the product as people call it: "Aurora PostgreSQL".
	Name string
	// Versions are the versions the row covers: "9.6–17", "V8R6".
	Versions string
	// Session says whether and how the session strategy works.
	Session Feature
	// Table says whether and how the lease-table strategy works.
	Table Feature
	// Recommended is the strategy detect recommends when nothing else is
	// known, and RecommendedWhen the condition that changes it.
	Recommended     Strategy
	RecommendedWhen string
	// Claim is the recommended claim strategy for task rows, and ClaimNote
	// why (what SKIP LOCKED does on this product).
	Claim     ClaimStrategy
	ClaimNote string
	// Listing says how locks ls finds session locks and their holders.
	Listing Feature
	// Kill says how unlock --kill-session ends a holder's session.
	Kill Feature
	// Privileges lists what the database user needs, per purpose.
	Privileges []string
	// Verified says how the tests of this repository cover the product,
	// and VerifiedDetail against what.
	Verified       Verification
	VerifiedDetail string
	// Notes are pitfalls worth knowing before going live.
	Notes []string
}

// Feature is whether a product has one capability, and how.
type Feature struct {
	Status FeatureStatus
	// Detail says how (statements, views) or why not.
	Detail string
}

// FeatureStatus is the short answer of a Feature.
type FeatureStatus string

// The feature statuses.
const (
	// FeatureYes: available on every covered version.
	FeatureYes FeatureStatus = "yes"
	// FeatureNo: not available; Detail says why and what to use instead.
	FeatureNo FeatureStatus = "no"
	// FeatureIfProven: used only where a probe of the server proves it
	// (detection or selfcheck); Detail names the probe.
	FeatureIfProven FeatureStatus = "if proven"
	// FeatureSomeVersions: available from a version or in a mode; Detail
	// says which.
	FeatureSomeVersions FeatureStatus = "some versions"
)

// Verification says how this repository's tests cover a product.
type Verification string

// The verification levels.
const (
	// VerifiedLive: the conformance suite runs against a live server of
	// the product in this repository's tests (scripts/test.sh).
	VerifiedLive Verification = "live"
	// VerifiedSimulated: every statement is pinned by golden SQL and driven
	// through a simulator that answers with the server's documented return
	// codes and errors; never run against a live server here.
	VerifiedSimulated Verification = "golden SQL + simulator"
	// VerifiedGolden: the statements are pinned by golden SQL; no
	// simulator or live server covers this product's particular behaviour.
	VerifiedGolden Verification = "golden SQL only"
)

// familyOrder is the order of dialect families in SupportTable; dialects
// not listed follow, by name.
var familyOrder = []string{"postgres", "mysql", "sqlite", "oracle", "sqlserver", "dameng", "dm"}

// checkSupport checks the support rows of d as Register takes them: each
// row needs a product and a name, its Dialect is d's (filled in when
// empty), and no product and variant repeat.
func checkSupport(d *Dialect) error {
	seen := map[string]bool{}
	for i := range d.Support {
		r := &d.Support[i]
		if r.Dialect == "" {
			r.Dialect = d.Name
		}
		if r.Product == "" || r.Name == "" || r.Dialect != d.Name {
			return fmt.Errorf("support row %d of %s needs a product and a name, and the dialect %s: %+v", i, d.Name, d.Name, *r)
		}
		key := r.Product + "/" + r.Variant
		if seen[key] {
			return fmt.Errorf("support row %d of %s repeats %s", i, d.Name, key)
		}
		seen[key] = true
	}
	return nil
}

// SupportTable returns the support rows of the registered backends: by
// dialect family (postgres, mysql, sqlite, oracle, sqlserver, dameng, then
// any other by name, as Dialects lists them), and within a backend in the
// order of its Support.
func SupportTable() []ProductSupport {
	var out []ProductSupport
	for _, d := range Dialects() {
		out = append(out, d.Support...)
	}
	return out
}

// SupportFor returns the row of product and variant, falling back to the
// product's row without a variant.
func SupportFor(product, variant string) (ProductSupport, bool) {
	rows := SupportTable()
	for _, r := range rows {
		if r.Product == product && r.Variant == variant {
			return r, true
		}
	}
	for _, r := range rows {
		if r.Product == product && r.Variant == "" {
			return r, true
		}
	}
	return ProductSupport{}, false
}
