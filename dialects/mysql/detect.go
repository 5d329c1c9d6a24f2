package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/go-sql-driver/mysql"

	"github.com/schedlock/schedlock/dialects"
)

// errUnknownSystemVariable is ER_UNKNOWN_SYSTEM_VARIABLE.
const errUnknownSystemVariable = 1193

// VariantAurora and VariantPercona mark MySQL builds in Info.Variant.
const (
	VariantAurora  = "aurora"
	VariantPercona = "percona"
)

// Detect identifies the server behind db from SELECT VERSION() and
// @@version_comment (never from the handshake, whose MariaDB version
// carries a "5.5.5-" prefix before 11.0.1) and returns DATABASE() beside
// it, the scope of LockName ("" when the DSN names no database). On MySQL
// it then probes SELECT AURORA_VERSION(): success marks Variant "aurora",
// an error means a plain MySQL.
func Detect(ctx context.Context, db *sql.DB) (info dialects.Info, database string, err error) {
	info, database, _, _, err = DetectTable(ctx, db, "")
	return info, database, err
}

// tableCountSQL counts the tables called table (a plain identifier,
// optionally schema.table, checked by dialects.Table.Schema, so it is
// written into the text as a literal) in its schema or the current
// database: information_schema compares names without letter case, so a
// count of 0 proves that no table of that name exists whatever the
// server's lower_case_table_names.
func tableCountSQL(table string) string {
	schema, name := "DATABASE()", table
	if i := strings.IndexByte(table, '.'); i >= 0 {
		schema, name = "'"+table[:i]+"'", table[i+1:]
	}
	return "(SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = " + schema + " AND TABLE_NAME = '" + name + "')"
}

// DetectTable is Detect, and in the same statement whether the lease
// table called table (sqlkit.OptionsTable; "" for none) exists; seen
// reports whether it could look.
func DetectTable(ctx context.Context, db *sql.DB, table string) (info dialects.Info, database string, exists, seen bool, err error) {
	var version, comment, current sql.NullString
	var count sql.NullInt64
	if table != "" && !identRE.MatchString(table) {
		table = ""
	}
	if table != "" {
		err = db.QueryRowContext(ctx, "SELECT VERSION(), @@version_comment, DATABASE(), "+tableCountSQL(table)).Scan(&version, &comment, &current, &count)
		var me *mysql.MySQLError
		if errors.As(err, &me) {
			table = "" // a proxy or fork that cannot read information_schema or @@version_comment
		} else {
			seen = err == nil
		}
	}
	if table == "" {
		err = db.QueryRowContext(ctx, "SELECT VERSION(), @@version_comment, DATABASE()").Scan(&version, &comment, &current)
	}
	var me *mysql.MySQLError
	if errors.As(err, &me) && me.Number == errUnknownSystemVariable {
		// A proxy or fork without @@version_comment: the version alone.
		err = db.QueryRowContext(ctx, "SELECT VERSION(), DATABASE()").Scan(&version, &current)
	}
	if err != nil {
		return dialects.Info{}, "", false, false, fmt.Errorf("read server version: %w", ClassifyError(err))
	}
	exists = count.Int64 > 0
	info = ParseVersion(version.String, comment.String)
	if info.Product != dialects.ProductMySQL {
		return info, current.String, exists, seen, nil
	}
	var aurora sql.NullString
	err = db.QueryRowContext(ctx, "SELECT AURORA_VERSION()").Scan(&aurora)
	switch {
	case err == nil:
		info.Variant = VariantAurora
	case ctx.Err() != nil:
		return dialects.Info{}, "", false, false, fmt.Errorf("probe AURORA_VERSION(): %w", ctx.Err())
	}
	return info, current.String, exists, seen, nil
}

// identRE is a plain table name, optionally schema.table (as
// dialects.Table.Schema accepts it).
var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_$]{0,62}(\.[A-Za-z_][A-Za-z0-9_$]{0,62})?$`)

// ParseVersion turns the results of VERSION() and @@version_comment into an
// Info. It is pure, so it is tested against banners of every product:
//
//	"8.0.36-log", "MySQL Community Server - GPL"   → mysql 8.0.36
//	"10.11.19-MariaDB-0+deb12u1", "Debian 12"      → mariadb 10.11.19
//	"8.0.11-TiDB-v8.5.6", "TiDB Server …"          → tidb v8.5.6
//
// A "5.5.5-" prefix (a MariaDB handshake version passed by mistake) is
// ignored. TiDB is also recognised by its comment when its server-version
// setting hides "-TiDB-" in VERSION(). A comment naming Percona sets Variant
// "percona"; Aurora needs the live probe of Detect.
func ParseVersion(version, comment string) dialects.Info {
	info := dialects.Info{Dialect: Name, Banner: version}
	v := strings.TrimSpace(version)
	lower := strings.ToLower(v)
	switch {
	case strings.Contains(lower, "-tidb-"):
		info.Product = dialects.ProductTiDB
		i := strings.Index(lower, "-tidb-")
		info.Version = v[i+len("-tidb-"):]
	case strings.Contains(strings.ToLower(comment), "tidb"):
		info.Product = dialects.ProductTiDB
		info.Version = leadingVersion(v)
	case strings.Contains(lower, "mariadb"):
		info.Product = dialects.ProductMariaDB
		info.Version = leadingVersion(strings.TrimPrefix(v, "5.5.5-"))
	default:
		info.Product = dialects.ProductMySQL
		info.Version = leadingVersion(v)
		if strings.Contains(strings.ToLower(comment), "percona") {
			info.Variant = VariantPercona
		}
	}
	return info
}

// leadingVersion returns the dotted number at the start of s: "8.0.36" of
// "8.0.36-log".
func leadingVersion(s string) string {
	end := 0
	for end < len(s) && (s[end] == '.' || (s[end] >= '0' && s[end] <= '9')) {
		end++
	}
	return strings.TrimRight(s[:end], ".")
}

// versionAtLeast reports whether the dotted version v (an optional leading
// "v" is ignored) is at least want; missing parts count as 0. An unparsable
// version is not at least anything.
func versionAtLeast(v string, want ...int) bool {
	v = leadingVersion(strings.TrimPrefix(v, "v"))
	if v == "" {
		return false
	}
	parts := strings.Split(v, ".")
	for i, w := range want {
		got := 0
		if i < len(parts) {
			n, err := strconv.Atoi(parts[i])
			if err != nil {
				return false
			}
			got = n
		}
		if got != w {
			return got > w
		}
	}
	return true
}
