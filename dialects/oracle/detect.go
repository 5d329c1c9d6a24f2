package oracle

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/schedlock/schedlock/dialects"
)

// Detection statements. PRODUCT_COMPONENT_VERSION is read with p.* because
// its VERSION_FULL column exists only from 18c: selecting it by name would
// fail on 11g and 12c. PRODUCT is matched loosely because 26ai calls itself
// "Oracle AI Database".
const (
	detectVersionSQL = "SELECT p.*, SYS_CONTEXT('USERENV', 'SESSION_USER') AS schedlock_session_user " +
		"FROM product_component_version p WHERE p.product LIKE '%Oracle%Database%'"
	detectBannerSQL = "SELECT banner FROM v$version WHERE banner LIKE '%Oracle%Database%' AND ROWNUM = 1"
	// CLOUD_SERVICE is set on Autonomous Database only; older releases
	// reject the parameter (ORA-02003), which means "not Autonomous".
	detectCloudSQL = "SELECT SYS_CONTEXT('USERENV', 'CLOUD_SERVICE') FROM dual"
	// probeDBMSLockSQL compiles a reference to SYS.DBMS_LOCK without locking
	// or committing anything: PLS-00201 when EXECUTE is not granted.
	probeDBMSLockSQL = "BEGIN :1 := SYS.DBMS_LOCK.X_MODE; END;"
)

// Variants in Info.Variant: the edition from the banner, or "autonomous".
const (
	VariantAutonomous = "autonomous"
	VariantEnterprise = "enterprise"
	VariantStandard   = "standard"
	VariantExpress    = "express"
	VariantFree       = "free"
	VariantPersonal   = "personal"
)

// Versions holds what the detection queries returned, for ParseVersion.
type Versions struct {
	// Product is PRODUCT_COMPONENT_VERSION.PRODUCT, e.g. "Oracle Database
	// 19c Enterprise Edition ".
	Product string
	// Version is PRODUCT_COMPONENT_VERSION.VERSION, e.g. "19.0.0.0.0".
	Version string
	// VersionFull is PRODUCT_COMPONENT_VERSION.VERSION_FULL (18c+), e.g.
	// "19.22.0.0.0"; empty on older releases.
	VersionFull string
	// Banner is the first V$VERSION banner naming the database.
	Banner string
	// CloudService is SYS_CONTEXT('USERENV','CLOUD_SERVICE'), set on
	// Autonomous Database only.
	CloudService string
}

// Detect identifies the server behind db from PRODUCT_COMPONENT_VERSION
// (VERSION_FULL where it exists, else VERSION; never the "19c"-style
// marketing name in the banner, whose form changed with 23ai and 26ai),
// the V$VERSION banner (the edition) and SYS_CONTEXT('USERENV',
// 'CLOUD_SERVICE') (Autonomous Database). It sends only those reads; New
// also probes whether the user may execute SYS.DBMS_LOCK.
func Detect(ctx context.Context, db *sql.DB) (dialects.Info, error) {
	info, _, err := identify(ctx, db)
	return info, err
}

// identify is Detect, returning the session user too (for the GRANT that
// the DBMS_LOCK probe's answer may name).
func identify(ctx context.Context, db *sql.DB) (dialects.Info, string, error) {
	v, user, err := readVersion(ctx, db)
	if err != nil {
		return dialects.Info{}, "", err
	}
	if err := db.QueryRowContext(ctx, detectBannerSQL).Scan(&v.Banner); err != nil && ctx.Err() != nil {
		return dialects.Info{}, "", fmt.Errorf("read v$version: %w", ctx.Err())
	}
	var cloud sql.NullString
	if err := db.QueryRowContext(ctx, detectCloudSQL).Scan(&cloud); err != nil && ctx.Err() != nil {
		return dialects.Info{}, "", fmt.Errorf("probe CLOUD_SERVICE: %w", ctx.Err())
	}
	v.CloudService = cloud.String
	info := ParseVersion(v)
	if info.Version == "" && v.Banner == "" {
		return dialects.Info{}, "", fmt.Errorf("neither PRODUCT_COMPONENT_VERSION nor V$VERSION names an Oracle Database: is this Oracle?")
	}
	return info, user, nil
}

// readVersion reads PRODUCT_COMPONENT_VERSION by column name and the
// session user.
func readVersion(ctx context.Context, db *sql.DB) (Versions, string, error) {
	rows, err := db.QueryContext(ctx, detectVersionSQL)
	if err != nil {
		return Versions{}, "", fmt.Errorf("read product_component_version: %w", err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return Versions{}, "", fmt.Errorf("read product_component_version: %w", err)
	}
	var v Versions
	var user string
	if rows.Next() {
		vals := make([]sql.NullString, len(cols))
		dest := make([]any, len(cols))
		for i := range vals {
			dest[i] = &vals[i]
		}
		if err := rows.Scan(dest...); err != nil {
			return Versions{}, "", fmt.Errorf("read product_component_version: %w", err)
		}
		for i, c := range cols {
			switch strings.ToUpper(c) {
			case "PRODUCT":
				v.Product = vals[i].String
			case "VERSION":
				v.Version = vals[i].String
			case "VERSION_FULL":
				v.VersionFull = vals[i].String
			case "SCHEDLOCK_SESSION_USER":
				user = vals[i].String
			}
		}
	}
	if err := rows.Err(); err != nil {
		return Versions{}, "", fmt.Errorf("read product_component_version: %w", err)
	}
	return v, user, rows.Close()
}

// ParseVersion turns what the detection queries returned into an Info. It
// is pure, so it is tested against the banners of every release:
//
//	VERSION_FULL "19.22.0.0.0", banner "Oracle Database 19c Enterprise Edition Release 19.0.0.0.0 - Production"
//	  → oracle 19.22.0.0.0, variant enterprise
//	VERSION "11.2.0.2.0", banner "Oracle Database 11g Express Edition Release 11.2.0.2.0 - 64bit Production"
//	  → oracle 11.2.0.2.0, variant express
//	VERSION_FULL "23.26.0.0.0", banner "Oracle Database 26 AI Enterprise Edition Release 23.26.0.0.0"
//	  → oracle 23.26.0.0.0, variant enterprise
//
// The version is VERSION_FULL, else VERSION, else the number after
// "Release" in the banner; the marketing name ("11g", "23ai", "26 AI") is
// never parsed. A CLOUD_SERVICE makes the variant "autonomous"; otherwise
// it is the edition named in the banner (or in PRODUCT when the banner is
// unreadable).
func ParseVersion(v Versions) dialects.Info {
	info := dialects.Info{Dialect: Name, Product: Product, Banner: strings.TrimSpace(v.Banner)}
	if info.Banner == "" {
		info.Banner = strings.TrimSpace(strings.TrimSpace(v.Product) + " " + strings.TrimSpace(v.Version))
	}
	switch {
	case dottedVersion(v.VersionFull) != "":
		info.Version = dottedVersion(v.VersionFull)
	case dottedVersion(v.Version) != "":
		info.Version = dottedVersion(v.Version)
	default:
		info.Version = releaseInBanner(v.Banner)
	}
	switch {
	case strings.TrimSpace(v.CloudService) != "":
		info.Variant = VariantAutonomous
	default:
		info.Variant = edition(v.Banner)
		if info.Variant == "" {
			info.Variant = edition(v.Product)
		}
	}
	return info
}

// edition names the edition a banner or product string mentions.
func edition(s string) string {
	lower := strings.ToLower(s)
	switch {
	case strings.Contains(lower, "enterprise edition"):
		return VariantEnterprise
	case strings.Contains(lower, "standard edition"):
		return VariantStandard
	case strings.Contains(lower, "express edition"):
		return VariantExpress
	case strings.HasPrefix(lower, "personal oracle"), strings.Contains(lower, "personal edition"):
		return VariantPersonal
	case strings.Contains(lower, " free"):
		return VariantFree
	default:
		return ""
	}
}

// releaseInBanner returns the dotted number after "Release " in a banner:
// "11.2.0.2.0" of "… Release 11.2.0.2.0 - 64bit Production".
func releaseInBanner(banner string) string {
	i := strings.Index(banner, "Release ")
	if i < 0 {
		return ""
	}
	return dottedVersion(banner[i+len("Release "):])
}

// dottedVersion returns the dotted number at the start of s (after
// spaces), or "" when s does not start with one.
func dottedVersion(s string) string {
	s = strings.TrimSpace(s)
	end := 0
	for end < len(s) && (s[end] == '.' || (s[end] >= '0' && s[end] <= '9')) {
		end++
	}
	return strings.TrimRight(s[:end], ".")
}

// versionAtLeast reports whether the dotted version v is at least want;
// missing parts count as 0. An empty or unparsable version is not at least
// anything.
func versionAtLeast(v string, want ...int) bool {
	parts := strings.Split(dottedVersion(v), ".")
	if parts[0] == "" {
		return false
	}
	for i, w := range want {
		got := 0
		if i < len(parts) {
			if _, err := fmt.Sscanf(parts[i], "%d", &got); err != nil {
				return false
			}
		}
		if got != w {
			return got > w
		}
	}
	return true
}
