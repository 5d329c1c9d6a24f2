package postgres

import (
	"testing"

	"github.com/schedlock/schedlock/dialects"
)

func TestParseBanner(t *testing.T) {
	tests := []struct {
		banner  string
		product string
		version string
	}{
		// PostgreSQL
		{"PostgreSQL 16.3 on …", dialects.ProductPostgreSQL, "16.3"},
		{"PostgreSQL 15.20 (Debian 15.20-0+deb12u1) on x86_64-pc-linux-gnu, compiled by gcc (Debian 12.2.0-14+deb12u1) 12.2.0, 64-bit", dialects.ProductPostgreSQL, "15.20"},
		{"PostgreSQL 17beta1 on x86_64-pc-linux-gnu, compiled by gcc", dialects.ProductPostgreSQL, "17beta1"},
		{"PostgreSQL 9.6.24 on x86_64-pc-linux-gnu, compiled by gcc", dialects.ProductPostgreSQL, "9.6.24"},
		// CockroachDB
		{"CockroachDB CCL v24.3.0 (x86_64-pc-linux-gnu, built …)", dialects.ProductCockroachDB, "v24.3.0"},
		{"CockroachDB OSS v21.1.1 (x86_64-unknown-linux-gnu, built 2021/05/24 15:00:00, go1.15.11)", dialects.ProductCockroachDB, "v21.1.1"},
		// YugabyteDB: the YB version, not the PostgreSQL one
		{"PostgreSQL 11.2-YB-2.18.0.1-b0 …", dialects.ProductYugabyteDB, "2.18.0.1"},
		{"PostgreSQL 11.2-YB-2.18.0.1-b0 on x86_64-pc-linux-gnu, compiled by clang version 15.0.3, 64-bit", dialects.ProductYugabyteDB, "2.18.0.1"},
		{"PostgreSQL 15.2-YB-2025.1…", dialects.ProductYugabyteDB, "2025.1"},
		{"PostgreSQL 15.2-YB-2025.1.0.0-b0 on x86_64-pc-linux-gnu", dialects.ProductYugabyteDB, "2025.1.0.0"},
		// KingbaseES
		{"KingbaseES V008R006C007B0024 on x86_64-pc-linux-gnu, compiled by gcc …", dialects.ProductKingbase, "V008R006C007B0024"},
		{"KingbaseES V008R006C005B0023 on x86_64-pc-linux-gnu, compiled by gcc …", dialects.ProductKingbase, "V008R006C005B0023"},
		// openGauss, with and without a PostgreSQL prefix
		{"(openGauss 5.0.0 build a07d57c3) compiled at …", dialects.ProductOpenGauss, "5.0.0"},
		{"PostgreSQL 9.2.4 (openGauss 5.0.0 build …) …", dialects.ProductOpenGauss, "5.0.0"},
		{"(openGauss-lite 5.0.0 build a07d57c3) compiled at 2023-03-30 00:00:00", dialects.ProductOpenGauss, "5.0.0"},
		// unknown
		{"", "", ""},
		{"8.0.36-log", "", ""},
		{"Redshift-like PostgreSQL without the prefix", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.banner, func(t *testing.T) {
			got := ParseBanner(tt.banner)
			want := dialects.Info{Dialect: Name, Product: tt.product, Version: tt.version, Banner: tt.banner}
			if got != want {
				t.Errorf("ParseBanner(%q)\n got %+v\nwant %+v", tt.banner, got, want)
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
		{"2025.1.0.0", []int{2025, 1}, true},
		{"2025.1", []int{2025, 1}, true},
		{"2025.2.1.0", []int{2025, 1}, true},
		{"2026", []int{2025, 1}, true},
		{"2024.2.3.0", []int{2025, 1}, false},
		{"2.25.1.0", []int{2025, 1}, false},
		{"2.18.0.1", []int{2025, 1}, false},
		{"v24.3.0", []int{24, 3}, true},
		{"v24.2.9", []int{24, 3}, false},
		{"17beta1", []int{17}, true},
		{"17beta1", []int{17, 1}, false},
		{"", []int{1}, false},
		{"V008R006", []int{1}, false},
	}
	for _, tt := range tests {
		if got := versionAtLeast(tt.v, tt.want...); got != tt.ok {
			t.Errorf("versionAtLeast(%q, %v) = %v, want %v", tt.v, tt.want, got, tt.ok)
		}
	}
}
