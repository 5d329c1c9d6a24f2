package dameng

import (
	"context"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

func TestParseVersion(t *testing.T) {
	tests := []struct {
		name    string
		in      Versions
		ok      bool
		version string
		mode    string
		banner  string
	}{
		{
			name:    "DM8 with build row, default mode",
			in:      Versions{Banners: []string{"DM Database Server 64 V8", "DB Version: 0x7000c", "03134284094-20230927-215406-20097"}, CompatibleMode: "0"},
			ok:      true,
			version: "8 (build 03134284094-20230927-215406-20097)",
			mode:    ModeNone,
			banner:  "DM Database Server 64 V8; DB Version: 0x7000c; 03134284094-20230927-215406-20097",
		},
		{
			name:    "DM8 without build row, Oracle mode",
			in:      Versions{Banners: []string{"DM Database Server 64 V8", "DB Version: 0x7000d"}, CompatibleMode: "2"},
			ok:      true,
			version: "8",
			mode:    ModeOracle,
			banner:  "DM Database Server 64 V8; DB Version: 0x7000d",
		},
		{
			name:    "padded rows and an x64 server line, partial PostgreSQL mode",
			in:      Versions{Banners: []string{"  DM Database Server x64 V8  ", "", "DB Version: 0x7000c"}, CompatibleMode: " 7 "},
			ok:      true,
			version: "8",
			mode:    ModePostgreSQL,
			banner:  "DM Database Server x64 V8; DB Version: 0x7000c",
		},
		{
			name:    "DM7, MySQL mode",
			in:      Versions{Banners: []string{"DM Database Server x64 V7.6.0.197-Build(2019.09.11-113380)ENT"}, CompatibleMode: "4"},
			ok:      true,
			version: "7.6.0.197",
			mode:    ModeMySQL,
			banner:  "DM Database Server x64 V7.6.0.197-Build(2019.09.11-113380)ENT",
		},
		{
			name:   "mode unreadable",
			in:     Versions{Banners: []string{"DM Database Server 64 V8"}},
			ok:     true,
			mode:   "",
			banner: "DM Database Server 64 V8", version: "8",
		},
		{
			name:   "Oracle's V$VERSION is not Dameng",
			in:     Versions{Banners: []string{"Oracle Database 19c Enterprise Edition Release 19.0.0.0.0 - Production"}},
			ok:     false,
			banner: "Oracle Database 19c Enterprise Edition Release 19.0.0.0.0 - Production",
		},
		{name: "no rows", in: Versions{}, ok: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			info, ok := ParseVersion(tt.in)
			if ok != tt.ok {
				t.Fatalf("ok = %v, want %v (info %+v)", ok, tt.ok, info)
			}
			if info.Product != Product || info.Dialect != Name || info.Banner != tt.banner {
				t.Errorf("info = %+v; want product %q, banner %q", info, Product, tt.banner)
			}
			if tt.ok && (info.Version != tt.version || info.Mode != tt.mode) {
				t.Errorf("version %q, mode %q; want %q, %q", info.Version, info.Mode, tt.version, tt.mode)
			}
		})
	}
}

func TestParseMode(t *testing.T) {
	tests := map[string]string{
		"0": ModeNone, "1": ModeSQL92, "2": ModeOracle, "3": ModeSQLServer, "4": ModeMySQL,
		"5": ModeDM6, "6": ModeTeradata, "7": ModePostgreSQL,
		"8": "compatible_mode=8", "-1": "compatible_mode=-1", "": "", "x": "",
	}
	for in, want := range tests {
		if got := ParseMode(in); got != want {
			t.Errorf("ParseMode(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestDBVersion(t *testing.T) {
	if got := DBVersion([]string{"DM Database Server 64 V8", " DB Version: 0x7000C"}); got != "0x7000C" {
		t.Errorf("DBVersion = %q", got)
	}
	if got := DBVersion([]string{"DM Database Server 64 V8"}); got != "" {
		t.Errorf("DBVersion without the row = %q", got)
	}
}

// TestDetectSimulated runs Detect against the simulated server: V$VERSION
// and COMPATIBLE_MODE become the Info; an unreadable V$DM_INI leaves Mode
// empty without failing; another product's banner is refused.
func TestDetectSimulated(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cfg := configDM8()
	cfg.CompatibleMode = "2"
	sim := newSim(t, cfg)
	db, _ := sim.Open(t)
	info, err := Detect(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if info.Product != Product || info.Version != "8 (build 03134284094-20230927-215406-20097)" || info.Mode != ModeOracle {
		t.Errorf("Detect = %+v", info)
	}

	cfg.NoModeView = true
	sim = newSim(t, cfg)
	db, _ = sim.Open(t)
	if info, err = Detect(ctx, db); err != nil || info.Mode != "" {
		t.Errorf("with V$DM_INI unreadable: %+v, %v; want an Info without mode", info, err)
	}

	cfg = configDM8()
	cfg.Banners = []string{"PostgreSQL 16.2"}
	sim = newSim(t, cfg)
	db, _ = sim.Open(t)
	if _, err := Detect(ctx, db); err == nil {
		t.Error("Detect accepted a server whose V$VERSION names no DM Database Server")
	}
	sim.AssertUnderstood(t)
}

// TestRecommend: the table unless DBMS_LOCK is proven installed.
func TestRecommend(t *testing.T) {
	for _, tt := range []struct {
		name string
		cfg  simConfig
		want dialects.Strategy
	}{
		{"DBMS_LOCK absent", configDM8(), dialects.StrategyTable},
		{"DBMS_LOCK installed", configWithDBMSLock(), dialects.StrategySession},
		{"catalog unreadable", func() simConfig { c := configWithDBMSLock(); c.NoCatalog = true; return c }(), dialects.StrategyTable},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			// A distinct banner per case keeps the Info, Recommend's key, apart.
			cfg.Banners = append([]string{"DM Database Server 64 V8"}, "case "+tt.name)
			_, db := openSim(t, cfg)
			got, why := db.Recommend()
			if got != tt.want || why == "" {
				t.Errorf("Recommend = %s (%s); want %s", got, why, tt.want)
			}
		})
	}
}
