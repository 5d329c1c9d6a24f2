package postgres

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/sqlkit"
)

// KingbaseES compatibility modes in Info.Mode.
const (
	ModePG        = "pg"
	ModeOracle    = "oracle"
	ModeMySQL     = "mysql"
	ModeSQLServer = "sqlserver"
)

// Statements of the KingbaseES mode probe: SHOW first; current_setting with
// missing_ok when SHOW is refused (a mode whose parser does not take SHOW,
// or a build without the parameter, answers NULL).
const (
	showModeSQL    = "SHOW database_mode"
	settingModeSQL = "SELECT current_setting('database_mode', true)"
)

// detectKingbase completes info for KingbaseES with the compatibility
// mode (Info.Mode) and returns what it proved: the catalog names (pg_ or
// sys_, ProbeCatalog) and the two-connection proof of its advisory locks,
// which the session locker, Kill and the recommendation use. A probe
// that fails for want of the feature is an answer, not an error; only a
// failure of the connection or the context is returned.
func detectKingbase(ctx context.Context, db *sql.DB, info *dialects.Info) (*serverFacts, error) {
	mode, err := probeKingbaseMode(ctx, db)
	if err != nil {
		return nil, err
	}
	info.Mode = mode
	catalog, err := ProbeCatalog(ctx, db)
	if err != nil {
		return nil, fmt.Errorf("probe the KingbaseES catalog: %w", err)
	}
	return proveAdvisory(ctx, db, catalog)
}

// detectOpenGauss proves openGauss's advisory locks (it has the pg_
// names).
func detectOpenGauss(ctx context.Context, db *sql.DB) (*serverFacts, error) {
	return proveAdvisory(ctx, db, PostgresCatalog)
}

// proveAdvisory runs the two-connection probe of the advisory lock
// functions named by catalog (sqlkit.ProbeSessionOps: a second session
// must be refused a lock the first holds, and get it once released), and
// returns the answer with the catalog. A probe cut short by the context
// is returned as the context's error.
func proveAdvisory(ctx context.Context, db *sql.DB, catalog Catalog) (*serverFacts, error) {
	facts := serverFacts{catalog: catalog}
	if catalog.errMissing() == nil {
		facts.advisory = sqlkit.ProbeSessionOps(ctx, db, SessionOps{Catalog: &catalog})
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("prove advisory locks: %w", err)
		}
	}
	return &facts, nil
}

// probeKingbaseMode reads database_mode and returns it normalised
// (NormalizeMode), or "" when the server has no such setting.
func probeKingbaseMode(ctx context.Context, db *sql.DB) (string, error) {
	var mode sql.NullString
	err := db.QueryRowContext(ctx, showModeSQL).Scan(&mode)
	if err != nil && pgError(err) != nil && ctx.Err() == nil {
		err = db.QueryRowContext(ctx, settingModeSQL).Scan(&mode)
		if err != nil && pgError(err) != nil && ctx.Err() == nil {
			return "", nil
		}
	}
	if err != nil {
		return "", fmt.Errorf("read database_mode: %w", err)
	}
	return NormalizeMode(mode.String), nil
}

// NormalizeMode turns a database_mode value into an Info.Mode: "pg"
// (also "postgresql", "postgres"), "oracle" ("ora"), "mysql",
// "sqlserver" ("mssql"); anything else in lower case, "" for nothing.
func NormalizeMode(v string) string {
	v = strings.ToLower(strings.TrimSpace(v))
	switch v {
	case "pg", "postgresql", "postgres":
		return ModePG
	case "oracle", "ora":
		return ModeOracle
	case "mysql":
		return ModeMySQL
	case "sqlserver", "mssql":
		return ModeSQLServer
	}
	return v
}

// productName is the product as messages name it, with its mode.
func productName(info dialects.Info) string {
	switch info.Product {
	case dialects.ProductKingbase:
		if info.Mode != "" {
			return "KingbaseES (" + info.Mode + " mode)"
		}
		return "KingbaseES"
	case dialects.ProductOpenGauss:
		return "openGauss"
	case dialects.ProductCockroachDB:
		return "CockroachDB"
	case dialects.ProductYugabyteDB:
		return "YugabyteDB"
	case dialects.ProductPostgreSQL:
		return "PostgreSQL"
	}
	return "this PostgreSQL-wire database"
}

// provenOnly reports whether info's product uses advisory locks only when
// detection proved them (KingbaseES, openGauss).
func provenOnly(info dialects.Info) bool {
	return info.Product == dialects.ProductKingbase || info.Product == dialects.ProductOpenGauss
}

// unprovenRefusal says why a product whose advisory locks must be proven
// gets no session locker, or nil when it may have one: detection proved
// them, or nothing is known (f nil: a backend not made by New; the lock
// functions then answer for themselves).
func unprovenRefusal(f *serverFacts, info dialects.Info) error {
	if f == nil {
		return nil
	}
	name := productName(info)
	if err := f.catalog.errMissing(); err != nil {
		return dialects.WithRemedy(fmt.Errorf("%w: %s: %v", dialects.ErrUnsupported, name, err), dialects.UseTableStrategy)
	}
	if !f.proven() {
		return dialects.WithRemedy(fmt.Errorf("%w: %s advisory locks did not pass the two-connection probe at detection (%s: %s)",
			dialects.ErrUnsupported, name, f.advisory.Status, strings.TrimPrefix(f.advisory.Detail, "proved: ")), dialects.UseTableStrategy)
	}
	return nil
}
