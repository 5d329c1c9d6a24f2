package oracle

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/schedlock/schedlock/dialects"
)

func TestParseVersion(t *testing.T) {
	tests := []struct {
		name    string
		in      Versions
		version string
		variant string
	}{
		{"11g EE", Versions{
			Product: "Oracle Database 11g Enterprise Edition ", Version: "11.2.0.2.0",
			Banner: "Oracle Database 11g Enterprise Edition Release 11.2.0.2.0 - 64bit Production"},
			"11.2.0.2.0", VariantEnterprise},
		{"11g XE", Versions{
			Product: "Oracle Database 11g Express Edition ", Version: "11.2.0.2.0",
			Banner: "Oracle Database 11g Express Edition Release 11.2.0.2.0 - 64bit Production"},
			"11.2.0.2.0", VariantExpress},
		{"12c SE2", Versions{
			Product: "Oracle Database 12c Standard Edition ", Version: "12.2.0.1.0",
			Banner: "Oracle Database 12c Standard Edition Release 12.2.0.1.0 - 64bit Production"},
			"12.2.0.1.0", VariantStandard},
		{"19c EE with VERSION_FULL", Versions{
			Product: "Oracle Database 19c Enterprise Edition ", Version: "19.0.0.0.0", VersionFull: "19.22.0.0.0",
			Banner: "Oracle Database 19c Enterprise Edition Release 19.0.0.0.0 - Production"},
			"19.22.0.0.0", VariantEnterprise},
		{"19c SE2", Versions{
			Product: "Oracle Database 19c Standard Edition 2 ", Version: "19.0.0.0.0", VersionFull: "19.3.0.0.0",
			Banner: "Oracle Database 19c Standard Edition 2 Release 19.0.0.0.0 - Production"},
			"19.3.0.0.0", VariantStandard},
		{"19c Autonomous", Versions{
			Product: "Oracle Database 19c Enterprise Edition ", Version: "19.0.0.0.0", VersionFull: "19.24.0.1.0",
			Banner: "Oracle Database 19c Enterprise Edition Release 19.0.0.0.0 - Production", CloudService: "OLTP"},
			"19.24.0.1.0", VariantAutonomous},
		{"21c XE", Versions{
			Product: "Oracle Database 21c Express Edition ", Version: "21.0.0.0.0", VersionFull: "21.3.0.0.0",
			Banner: "Oracle Database 21c Express Edition Release 21.0.0.0.0 - Production"},
			"21.3.0.0.0", VariantExpress},
		{"23ai Free", Versions{
			Product: "Oracle Database 23ai Free", Version: "23.0.0.0.0", VersionFull: "23.4.0.24.05",
			Banner: "Oracle Database 23ai Free Release 23.0.0.0.0 - Develop, Learn, and Run for Free"},
			"23.4.0.24.05", VariantFree},
		{"23ai EE", Versions{
			Product: "Oracle Database 23ai Enterprise Edition", Version: "23.0.0.0.0", VersionFull: "23.5.0.24.07",
			Banner: "Oracle Database 23ai Enterprise Edition Release 23.0.0.0.0"},
			"23.5.0.24.07", VariantEnterprise},
		{"26ai EE", Versions{
			Product: "Oracle AI Database 26ai Enterprise Edition", Version: "23.0.0.0.0", VersionFull: "23.26.0.0.0",
			Banner: "Oracle Database 26 AI Enterprise Edition Release 23.26.0.0.0"},
			"23.26.0.0.0", VariantEnterprise},
		{"banner only (no readable PRODUCT_COMPONENT_VERSION)", Versions{
			Banner: "Oracle Database 26 AI Enterprise Edition Release 23.26.0.0.0"},
			"23.26.0.0.0", VariantEnterprise},
		{"product only (no readable V$VERSION)", Versions{
			Product: "Oracle Database 19c Enterprise Edition ", Version: "19.0.0.0.0", VersionFull: "19.22.0.0.0"},
			"19.22.0.0.0", VariantEnterprise},
		{"personal", Versions{
			Product: "Personal Oracle Database 11g Release ", Version: "11.2.0.1.0",
			Banner: "Personal Oracle Database 11g Release 11.2.0.1.0 - 64bit Production"},
			"11.2.0.1.0", VariantPersonal},
		{"nothing", Versions{}, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ParseVersion(tt.in)
			if got.Dialect != Name || got.Product != Product || got.Version != tt.version || got.Variant != tt.variant {
				t.Errorf("ParseVersion(%+v)\n got %+v\nwant version %q variant %q", tt.in, got, tt.version, tt.variant)
			}
			if tt.in.Banner != "" && got.Banner != strings.TrimSpace(tt.in.Banner) {
				t.Errorf("Banner = %q, want the V$VERSION banner", got.Banner)
			}
		})
	}
}

// TestParseVersionIgnoresMarketingName: the "NNc"/"NNai" name never decides
// the version, even when it disagrees with the release number.
func TestParseVersionIgnoresMarketingName(t *testing.T) {
	got := ParseVersion(Versions{Banner: "Oracle Database 26 AI Enterprise Edition Release 23.26.0.0.0"})
	if strings.HasPrefix(got.Version, "26") {
		t.Errorf("version %q was read from the marketing name", got.Version)
	}
	got = ParseVersion(Versions{Banner: "Oracle Database 19c Enterprise Edition"})
	if got.Version != "" {
		t.Errorf("a banner without a release number gave version %q", got.Version)
	}
}

func TestVersionAtLeast(t *testing.T) {
	tests := []struct {
		v    string
		want []int
		ok   bool
	}{
		{"11.2.0.4.0", []int{12, 2}, false},
		{"12.1.0.2.0", []int{12, 2}, false},
		{"12.2.0.1.0", []int{12, 2}, true},
		{"19.22.0.0.0", []int{12, 2}, true},
		{"23.26.0.0.0", []int{23}, true},
		{"", []int{1}, false},
		{"x", []int{1}, false},
	}
	for _, tt := range tests {
		if got := versionAtLeast(tt.v, tt.want...); got != tt.ok {
			t.Errorf("versionAtLeast(%q, %v) = %v, want %v", tt.v, tt.want, got, tt.ok)
		}
	}
}

// TestDetectSimulated runs Detect against simulated servers of several
// releases and grants.
func TestDetectSimulated(t *testing.T) {
	t.Run("19c with every grant", func(t *testing.T) {
		_, db := openSim(t, config19c())
		want := dialects.Info{Dialect: Name, Product: Product, Variant: VariantEnterprise, Version: "19.22.0.0.0",
			Banner: "Oracle Database 19c Enterprise Edition Release 19.0.0.0.0 - Production"}
		if a := db.access; !a.Known || !a.Usable || a.User != "APP" {
			t.Errorf("New recorded DBMS_LOCK access %+v; want EXECUTE proved for APP", a)
		}
		if got := db.Info; got != want {
			t.Errorf("Info\n got %+v\nwant %+v", db.Info, want)
		}
		if s, why := db.Recommend(); s != dialects.StrategySession || !strings.Contains(why, "DBMS_LOCK") {
			t.Errorf("Recommend = %s (%s); want session", s, why)
		}
		if _, err := db.SessionLocker(); err != nil {
			t.Errorf("SessionLocker: %v", err)
		}
	})
	t.Run("11g: no VERSION_FULL column, no CLOUD_SERVICE key", func(t *testing.T) {
		cfg := simConfig{
			Product: "Oracle Database 11g Express Edition ", Version: "11.2.0.2.0",
			Banner: "Oracle Database 11g Express Edition Release 11.2.0.2.0 - 64bit Production",
			User:   "APP", NoCloudKey: true,
		}
		_, db := openSim(t, cfg)
		if db.Info.Version != "11.2.0.2.0" || db.Info.Variant != VariantExpress {
			t.Errorf("Info = %+v; want 11.2.0.2.0 express", db.Info)
		}
	})
	t.Run("Autonomous", func(t *testing.T) {
		cfg := config19c()
		cfg.Cloud = "OLTP"
		_, db := openSim(t, cfg)
		if db.Info.Variant != VariantAutonomous {
			t.Errorf("Variant = %q; want autonomous", db.Info.Variant)
		}
	})
	t.Run("without EXECUTE on DBMS_LOCK", func(t *testing.T) {
		cfg := config19c()
		cfg.NoDBMSLock = true
		cfg.User = "JOB_RUNNER"
		cfg.Banner = "Oracle Database 19c Enterprise Edition Release 19.0.0.0.0 - Production (no grant)"
		_, db := openSim(t, cfg)
		s, why := db.Recommend()
		if s != dialects.StrategyTable || !strings.Contains(why, "GRANT EXECUTE ON SYS.DBMS_LOCK TO JOB_RUNNER") {
			t.Errorf("Recommend = %s (%s); want table, naming the grant", s, why)
		}
		_, err := db.SessionLocker()
		var pe *dialects.PrivilegeError
		if !errors.As(err, &pe) || pe.Grant != "GRANT EXECUTE ON SYS.DBMS_LOCK TO JOB_RUNNER" || pe.Privilege != "EXECUTE ON SYS.DBMS_LOCK" {
			t.Fatalf("SessionLocker: got %v; want a *dialects.PrivilegeError with the grant", err)
		}
		if !strings.Contains(err.Error(), "or use "+string(dialects.TermStrategyTable)) || strings.Contains(err.Error(), "--") {
			t.Errorf("the refusal does not say what to use instead in the library's words: %v", err)
		}
		if _, err := db.TableLocker(dialects.Table{}); err != nil {
			t.Errorf("the table strategy must stay available: %v", err)
		}
	})
	t.Run("not Oracle", func(t *testing.T) {
		sim := newSim(t, simConfig{User: "APP"})
		sqlDB, _ := sim.Open(t)
		if _, err := Detect(context.Background(), sqlDB); err == nil {
			t.Fatal("Detect succeeded on a server that names no Oracle Database")
		}
	})
}
