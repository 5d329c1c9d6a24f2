package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/schedlock/schedlock/dialects"
)

// VariantAurora marks Amazon Aurora PostgreSQL in Info.Variant.
const VariantAurora = "aurora"

// detectSQL reads, in one statement, the banner, whether a function
// aurora_version() exists (Amazon Aurora's; a PostgreSQL without it is not
// Aurora, which a probe calling it would prove only by failing) and
// whether the relation $1 (the lease table the DSN names, resolved as the
// lockers' SQL resolves it; NULL for none) exists, for the pause check.
const detectSQL = "SELECT version(), EXISTS (SELECT 1 FROM pg_catalog.pg_proc WHERE proname = 'aurora_version'), to_regclass($1) IS NOT NULL"

// detect identifies the product behind db and proves what New keeps
// beyond its Info (see New): facts is nil on every product but KingbaseES
// and openGauss. table is the lease table to look for ("" for none); seen
// reports whether detection could look for it.
func detect(ctx context.Context, db *sql.DB, table string) (info dialects.Info, facts *serverFacts, exists, seen bool, err error) {
	var banner string
	var aurora bool
	err = db.QueryRowContext(ctx, detectSQL, once(db, sql.NullString{String: table, Valid: table != ""})...).Scan(&banner, &aurora, &exists)
	var pgErr *pgconn.PgError
	switch {
	case err == nil:
		seen = table != ""
	case errors.As(err, &pgErr) && ctx.Err() == nil:
		// A server of the family without pg_proc or to_regclass (an
		// older fork): the banner alone, Aurora by its probe.
		if err := db.QueryRowContext(ctx, "SELECT version()").Scan(&banner); err != nil {
			return dialects.Info{}, nil, false, false, dialects.Wrap(Name, "detect", fmt.Errorf("read version(): %w", classifyConnect(err)))
		}
		aurora = false
		if ParseBanner(banner).Product == dialects.ProductPostgreSQL {
			if aurora, err = isAurora(ctx, db); err != nil {
				return dialects.Info{}, nil, false, false, dialects.Wrap(Name, "detect", err)
			}
		}
	default:
		return dialects.Info{}, nil, false, false, dialects.Wrap(Name, "detect", fmt.Errorf("read version(): %w", classifyConnect(err)))
	}
	info = ParseBanner(banner)
	switch info.Product {
	case dialects.ProductPostgreSQL:
		if aurora {
			info.Variant = VariantAurora
		}
	case dialects.ProductKingbase:
		facts, err = detectKingbase(ctx, db, &info)
	case dialects.ProductOpenGauss:
		facts, err = detectOpenGauss(ctx, db)
	}
	if err != nil {
		return dialects.Info{}, nil, false, false, dialects.Wrap(Name, "detect", err)
	}
	return info, facts, exists, seen, nil
}

// isAurora runs SELECT aurora_version(): an answer means Aurora, a server
// error (undefined function on every other PostgreSQL) means not Aurora, and
// any other failure (network, cancelled context) is returned.
func isAurora(ctx context.Context, db *sql.DB) (bool, error) {
	var v string
	err := db.QueryRowContext(ctx, "SELECT aurora_version()").Scan(&v)
	if err == nil {
		return true, nil
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && ctx.Err() == nil {
		return false, nil
	}
	return false, fmt.Errorf("probe aurora_version(): %w", err)
}

var (
	// "CockroachDB CCL v24.3.0 (x86_64-pc-linux-gnu, built …)", also OSS.
	cockroachRE = regexp.MustCompile(`^CockroachDB (?:CCL|OSS)\s+(v?[0-9][^\s(]*)`)
	// "PostgreSQL 11.2-YB-2.18.0.1-b0 on …": the YugabyteDB version follows -YB-.
	yugabyteRE = regexp.MustCompile(`-YB-([0-9]+(?:\.[0-9]+)*)`)
	// "KingbaseES V008R006C007B0024 on x86_64-pc-linux-gnu, …".
	kingbaseRE = regexp.MustCompile(`KingbaseES\s+([^\s,]+)`)
	// "(openGauss 5.0.0 build a07d57c3) compiled at …", also openGauss-lite.
	openGaussRE = regexp.MustCompile(`openGauss(?:-lite)?\s+([0-9]+(?:\.[0-9]+)*)`)
	// "PostgreSQL 16.3 on …", "PostgreSQL 15.20 (Debian …) on …", "PostgreSQL 17beta1 …".
	postgresRE = regexp.MustCompile(`^PostgreSQL\s+([0-9][^\s,]*)`)
)

// ParseBanner identifies the product and its version from the text of
// SELECT version(). It recognises, in this order: CockroachDB (starts with
// "CockroachDB"; version as printed, e.g. "v24.3.0"), YugabyteDB (contains
// "-YB-"; the YugabyteDB version, e.g. "2.18.0.1", not the PostgreSQL one),
// KingbaseES (e.g. "V008R006C007B0024"), openGauss (anywhere in the banner;
// e.g. "5.0.0") and PostgreSQL (starts with "PostgreSQL"; e.g. "15.20").
// Anything else gives an empty Product and Version. Dialect is "postgres"
// and Banner is the input, always.
func ParseBanner(banner string) dialects.Info {
	info := dialects.Info{Dialect: Name, Banner: banner}
	b := strings.TrimSpace(banner)
	if m := cockroachRE.FindStringSubmatch(b); m != nil {
		info.Product, info.Version = dialects.ProductCockroachDB, m[1]
		return info
	}
	if strings.HasPrefix(b, "CockroachDB") {
		info.Product = dialects.ProductCockroachDB
		return info
	}
	if m := yugabyteRE.FindStringSubmatch(b); m != nil {
		info.Product, info.Version = dialects.ProductYugabyteDB, m[1]
		return info
	}
	if m := kingbaseRE.FindStringSubmatch(b); m != nil {
		info.Product, info.Version = dialects.ProductKingbase, m[1]
		return info
	}
	if m := openGaussRE.FindStringSubmatch(b); m != nil {
		info.Product, info.Version = dialects.ProductOpenGauss, m[1]
		return info
	}
	if m := postgresRE.FindStringSubmatch(b); m != nil {
		info.Product, info.Version = dialects.ProductPostgreSQL, m[1]
		return info
	}
	return info
}
