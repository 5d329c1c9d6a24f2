package dameng

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/schedlock/schedlock/dialects"
)

// Detection statements. V$VERSION has one text column (BANNER) and several
// rows: "DM Database Server 64 V8", "DB Version: 0x7000c", the build. It is
// read with * and by position so that a renamed column does not matter.
// COMPATIBLE_MODE is the dm.ini parameter that sets the SQL dialect the
// server imitates.
const (
	detectVersionSQL = "SELECT * FROM V$VERSION"
	detectModeSQL    = "SELECT PARA_VALUE FROM V$DM_INI WHERE PARA_NAME = 'COMPATIBLE_MODE'"
)

// Info.Mode values, from COMPATIBLE_MODE.
const (
	ModeNone       = "none"       // 0: DM's own dialect only (the default)
	ModeSQL92      = "sql92"      // 1
	ModeOracle     = "oracle"     // 2
	ModeSQLServer  = "mssql"      // 3
	ModeMySQL      = "mysql"      // 4
	ModeDM6        = "dm6"        // 5
	ModeTeradata   = "teradata"   // 6
	ModePostgreSQL = "postgresql" // 7: partial PostgreSQL compatibility
)

var modes = []string{ModeNone, ModeSQL92, ModeOracle, ModeSQLServer, ModeMySQL, ModeDM6, ModeTeradata, ModePostgreSQL}

// Versions holds what the detection queries returned, for ParseVersion.
type Versions struct {
	// Banners are the V$VERSION rows, in order.
	Banners []string
	// CompatibleMode is V$DM_INI's PARA_VALUE for COMPATIBLE_MODE ("0" …
	// "7"); empty when it could not be read.
	CompatibleMode string
}

var (
	serverLineRE = regexp.MustCompile(`(?i)^DM Database Server\b`)
	majorRE      = regexp.MustCompile(`\bV(\d+(?:\.\d+)*)`)
	dbVersionRE  = regexp.MustCompile(`(?i)^DB Version:\s*(0x[0-9a-f]+)`)
	buildRE      = regexp.MustCompile(`^\d{6,}-\d{8}-[0-9A-Za-z*-]+$`)
)

// ParseVersion turns what the detection queries returned into an Info, or
// reports false when no V$VERSION row names a DM Database Server. It is
// pure, so it is tested against real banners:
//
//	"DM Database Server 64 V8", "DB Version: 0x7000c", "03134284094-20230927-215406-20097"
//	  → dameng 8, banner "DM Database Server 64 V8; DB Version: 0x7000c; 03134284094-…"
//
// Version is the number after "V" in the server row ("8"; DM7 writes
// "7.6.0.197"), followed by
// the build row in parentheses when there is one: "8 (build
// 03134284094-20230927-215406-20097)". The "DB Version" row is the data
// format, not the release, and stays in the banner only. Mode comes from
// COMPATIBLE_MODE (see ParseMode).
func ParseVersion(v Versions) (dialects.Info, bool) {
	info := dialects.Info{Dialect: Name, Product: Product, Mode: ParseMode(v.CompatibleMode)}
	var lines []string
	server, build := "", ""
	for _, b := range v.Banners {
		b = strings.TrimSpace(b)
		if b == "" {
			continue
		}
		lines = append(lines, b)
		switch {
		case server == "" && serverLineRE.MatchString(b):
			server = b
		case build == "" && buildRE.MatchString(b):
			build = b
		}
	}
	info.Banner = strings.Join(lines, "; ")
	if server == "" {
		return info, false
	}
	if m := majorRE.FindStringSubmatch(server); m != nil {
		info.Version = m[1]
	}
	if build != "" {
		if info.Version == "" {
			info.Version = "build " + build
		} else {
			info.Version += " (build " + build + ")"
		}
	}
	return info, true
}

// DBVersion returns the data-format version of a V$VERSION row "DB
// Version: 0x7000c" among banners, or "".
func DBVersion(banners []string) string {
	for _, b := range banners {
		if m := dbVersionRE.FindStringSubmatch(strings.TrimSpace(b)); m != nil {
			return m[1]
		}
	}
	return ""
}

// ParseMode names a COMPATIBLE_MODE value: "0" none, "1" sql92, "2"
// oracle, "3" mssql, "4" mysql, "5" dm6, "6" teradata, "7" postgresql
// (partial). Another number gives "compatible_mode=<n>"; an empty or
// unparsable value gives "" (unknown).
func ParseMode(value string) string {
	n, err := strconv.Atoi(strings.TrimSpace(value))
	switch {
	case err != nil:
		return ""
	case n >= 0 && n < len(modes):
		return modes[n]
	default:
		return "compatible_mode=" + strconv.Itoa(n)
	}
}

// Detect identifies the server behind db from V$VERSION and
// COMPATIBLE_MODE (Info.Mode; left empty when V$DM_INI cannot be read). It
// sends only those reads; New also asks whether the DBMS_LOCK system
// package is installed.
func Detect(ctx context.Context, db *sql.DB) (dialects.Info, error) {
	banners, err := readBanners(ctx, db)
	if err != nil {
		return dialects.Info{}, err
	}
	var mode sql.NullString
	if err := db.QueryRowContext(ctx, detectModeSQL).Scan(&mode); err != nil && ctx.Err() != nil {
		return dialects.Info{}, fmt.Errorf("read COMPATIBLE_MODE: %w", ctx.Err())
	}
	info, ok := ParseVersion(Versions{Banners: banners, CompatibleMode: mode.String})
	if !ok {
		return dialects.Info{}, fmt.Errorf("V$VERSION does not name a DM Database Server (it says %q): is this Dameng?", info.Banner)
	}
	return info, nil
}

// readBanners reads every V$VERSION row, its columns joined by spaces.
func readBanners(ctx context.Context, db *sql.DB) ([]string, error) {
	rows, err := db.QueryContext(ctx, detectVersionSQL)
	if err != nil {
		return nil, fmt.Errorf("read V$VERSION: %w", trimmed(err))
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, fmt.Errorf("read V$VERSION: %w", err)
	}
	var out []string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		dest := make([]any, len(cols))
		for i := range vals {
			dest[i] = &vals[i]
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, fmt.Errorf("read V$VERSION: %w", err)
		}
		var parts []string
		for _, v := range vals {
			if s := strings.TrimSpace(v.String); s != "" {
				parts = append(parts, s)
			}
		}
		out = append(out, strings.Join(parts, " "))
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read V$VERSION: %w", err)
	}
	return out, rows.Close()
}
