package mysql

import (
	"database/sql"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/schedlock/schedlock/dialects"
)

func TestParseVersion(t *testing.T) {
	tests := []struct {
		version, comment string
		product, ver     string
		variant          string
	}{
		{"8.0.36", "MySQL Community Server - GPL", dialects.ProductMySQL, "8.0.36", ""},
		{"8.0.36-log", "MySQL Community Server - GPL", dialects.ProductMySQL, "8.0.36", ""},
		{"5.7.44", "MySQL Community Server (GPL)", dialects.ProductMySQL, "5.7.44", ""},
		{"8.0.35-27", "Percona Server (GPL), Release 27, Revision 2f8eeab2", dialects.ProductMySQL, "8.0.35", VariantPercona},
		{"10.4.7-MariaDB-log", "MariaDB Server", dialects.ProductMariaDB, "10.4.7", ""},
		{"10.11.19-MariaDB-0+deb12u1", "Debian 12", dialects.ProductMariaDB, "10.11.19", ""},
		{"11.4.2-MariaDB", "mariadb.org binary distribution", dialects.ProductMariaDB, "11.4.2", ""},
		{"5.5.5-10.6.12-MariaDB", "", dialects.ProductMariaDB, "10.6.12", ""},
		{"8.0.11-TiDB-v8.5.6", "TiDB Server (Apache License 2.0) Community Edition, MySQL 8.0 compatible", dialects.ProductTiDB, "v8.5.6", ""},
		{"8.0.11", "TiDB Server (Apache License 2.0) Community Edition, MySQL 8.0 compatible", dialects.ProductTiDB, "8.0.11", ""},
	}
	for _, tt := range tests {
		t.Run(tt.version, func(t *testing.T) {
			got := ParseVersion(tt.version, tt.comment)
			want := dialects.Info{Dialect: Name, Product: tt.product, Version: tt.ver, Variant: tt.variant, Banner: tt.version}
			if got != want {
				t.Errorf("ParseVersion(%q, %q) = %+v, want %+v", tt.version, tt.comment, got, want)
			}
		})
	}
}

func TestVersionAtLeast(t *testing.T) {
	tests := []struct {
		v    string
		want []int
		ok   bool
	}{
		{"5.7.5", []int{5, 7, 5}, true},
		{"5.7.4", []int{5, 7, 5}, false},
		{"5.7.44", []int{5, 7, 5}, true},
		{"5.6.51", []int{5, 7, 5}, false},
		{"8.0", []int{5, 7, 5}, true},
		{"10.0.2", []int{10, 0, 2}, true},
		{"10.0.1", []int{10, 0, 2}, false},
		{"10.11.19", []int{10, 2, 2}, true},
		{"v8.5.6", []int{8, 5}, true},
		{"", []int{1}, false},
		{"abc", []int{1}, false},
	}
	for _, tt := range tests {
		if got := versionAtLeast(tt.v, tt.want...); got != tt.ok {
			t.Errorf("versionAtLeast(%q, %v) = %v, want %v", tt.v, tt.want, got, tt.ok)
		}
	}
}

func TestSessionSupportAndRecommend(t *testing.T) {
	tests := []struct {
		banner  string
		session bool
	}{
		{"8.0.36", true},
		{"5.7.5-log", true},
		{"5.7.4-m14", false},
		{"5.6.51", false},
		{"10.0.2-MariaDB", true},
		{"10.0.1-MariaDB", false},
		{"5.5.68-MariaDB", false},
		{"10.11.19-MariaDB-0+deb12u1", true},
		{"8.0.11-TiDB-v8.5.6", false},
	}
	for _, tt := range tests {
		info := ParseVersion(tt.banner, "")
		strategy, why := Recommend(info)
		l, err := NewSessionLocker(nil, &SessionOps{Info: info})
		if tt.session {
			if err != nil || l == nil {
				t.Errorf("%s: NewSessionLocker = %v, %v; want a locker", tt.banner, l, err)
			}
			if strategy != dialects.StrategySession {
				t.Errorf("%s: Recommend = %s (%s), want session", tt.banner, strategy, why)
			}
			continue
		}
		if !errors.Is(err, dialects.ErrUnsupported) {
			t.Errorf("%s: NewSessionLocker error = %v, want ErrUnsupported", tt.banner, err)
		}
		if strategy != dialects.StrategyTable || why == "" {
			t.Errorf("%s: Recommend = %s (%q), want table with a reason", tt.banner, strategy, why)
		}
		if fix, ok := dialects.RemedyOf(err); !ok || fix != dialects.UseTableStrategy {
			t.Errorf("%s: refusal %v carries remedy %+v, want the table strategy", tt.banner, err, fix)
		}
		for _, text := range []string{err.Error(), why} {
			if !strings.Contains(text, string(dialects.TermStrategyTable)) || strings.Contains(text, "--") {
				t.Errorf("%s: %q does not name the table strategy in the library's words", tt.banner, text)
			}
		}
	}
}

func TestRegistered(t *testing.T) {
	d, ok := dialects.Lookup(Name)
	if !ok {
		t.Fatal("dialect mysql is not registered")
	}
	if d.Open == nil || d.CheckSessionNames == nil {
		t.Errorf("registration incomplete: %+v", d)
	}
	if got, _, err := dialects.ForScheme("mysql"); err != nil || got != d {
		t.Errorf("ForScheme(mysql) = %v, %v", got, err)
	}
}

func TestDetectLive(t *testing.T) {
	db := openLive(t, nil)
	ctx := testContext(t)
	var version, comment string
	var database sql.NullString
	if err := db.QueryRowContext(ctx, "SELECT VERSION(), @@version_comment, DATABASE()").Scan(&version, &comment, &database); err != nil {
		t.Fatal(err)
	}
	d, err := New(ctx, db, nil)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	info := d.Info
	if info.Dialect != Name || info.Banner != version {
		t.Errorf("Info = %+v, want dialect %s and banner %q", info, Name, version)
	}
	if d.Database != database.String {
		t.Errorf("Database = %q, want DATABASE() %q", d.Database, database.String)
	}
	if !regexp.MustCompile(`^v?\d+\.\d+(\.\d+)?$`).MatchString(info.Version) || !strings.Contains(version, strings.TrimPrefix(info.Version, "v")) {
		t.Errorf("Version %q is not the dotted version inside %q", info.Version, version)
	}
	isMaria := strings.Contains(version, "MariaDB")
	if (info.Product == dialects.ProductMariaDB) != isMaria {
		t.Errorf("Product %q for VERSION() %q", info.Product, version)
	}
	// AURORA_VERSION() decides the variant: it exists only on Aurora.
	var aurora string
	probeErr := db.QueryRowContext(ctx, "SELECT AURORA_VERSION()").Scan(&aurora)
	if (info.Variant == VariantAurora) != (probeErr == nil) {
		t.Errorf("Variant %q, but AURORA_VERSION() gave %q, %v", info.Variant, aurora, probeErr)
	}
	if isMaria && probeErr == nil {
		t.Errorf("AURORA_VERSION() answered on MariaDB: %q", aurora)
	}
	strategy, why := d.Recommend()
	if sessionSupport(info) == nil && strategy != dialects.StrategySession {
		t.Errorf("Recommend = %s (%s) on %s %s", strategy, why, info.Product, info.Version)
	}
}
