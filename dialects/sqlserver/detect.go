package sqlserver

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"strings"

	"github.com/schedlock/schedlock/dialects"
)

// Variants in Info.Variant, from SERVERPROPERTY('EngineEdition').
const (
	VariantAzureSQLDatabase        = "azure-sql-database"         // EngineEdition 5
	VariantAzureSQLManagedInstance = "azure-sql-managed-instance" // EngineEdition 8
	VariantAzureSynapse            = "azure-synapse"              // EngineEdition 6 (dedicated SQL pool)
	VariantAzureSynapseServerless  = "azure-synapse-serverless"   // EngineEdition 11
	VariantAzureSQLEdge            = "azure-sql-edge"             // EngineEdition 9
)

// ModeReadCommittedSnapshot is Info.Mode when the current database has
// READ_COMMITTED_SNAPSHOT ON (RCSI, Backend.RCSI): plain READ COMMITTED
// reads then use row versions, and a READPAST claim query is refused
// unless it also carries the READCOMMITTEDLOCK hint. The lock strategies
// are not affected.
const ModeReadCommittedSnapshot = "read_committed_snapshot"

// detectSQL reads the banner, the engine edition, the product version, the
// edition and the current database's READ_COMMITTED_SNAPSHOT flag in one
// round trip. SERVERPROPERTY returns sql_variant, so every value is cast to
// a plain type; sys.databases always shows the caller's own database.
const detectSQL = `SELECT @@VERSION,
  CAST(SERVERPROPERTY('EngineEdition') AS int),
  CAST(SERVERPROPERTY('ProductVersion') AS nvarchar(128)),
  CAST(SERVERPROPERTY('Edition') AS nvarchar(128)),
  (SELECT CAST(d.is_read_committed_snapshot_on AS int) FROM sys.databases AS d WHERE d.database_id = DB_ID())`

// Server is everything detection reads from the server.
type Server struct {
	// Banner is @@VERSION.
	Banner string
	// EngineEdition is SERVERPROPERTY('EngineEdition'): 2 Standard,
	// 3 Enterprise (also Developer and Evaluation), 4 Express, 5 Azure SQL
	// Database, 6 Azure Synapse dedicated SQL pool, 8 Azure SQL Managed
	// Instance, 9 Azure SQL Edge, 11 Azure Synapse serverless SQL pool;
	// 0 when unknown.
	EngineEdition int
	// ProductVersion is SERVERPROPERTY('ProductVersion'), e.g.
	// "16.0.4135.4"; empty when unknown.
	ProductVersion string
	// Edition is SERVERPROPERTY('Edition'), e.g. "Enterprise Edition
	// (64-bit)" or "SQL Azure".
	Edition string
	// ReadCommittedSnapshot is the current database's
	// is_read_committed_snapshot_on.
	ReadCommittedSnapshot bool
}

// ReadServer reads what detection needs from the server behind db with
// one query (detectSQL); ParseServer turns it into Info.
func ReadServer(ctx context.Context, db *sql.DB) (Server, error) {
	var (
		banner, version, edition sql.NullString
		engine, rcsi             sql.NullInt64
	)
	if err := db.QueryRowContext(ctx, detectSQL).Scan(&banner, &engine, &version, &edition, &rcsi); err != nil {
		return Server{}, dialects.Wrap(Name, "detect", fmt.Errorf("read @@VERSION and SERVERPROPERTY: %w", err))
	}
	return Server{
		Banner:                banner.String,
		EngineEdition:         int(engine.Int64),
		ProductVersion:        version.String,
		Edition:               edition.String,
		ReadCommittedSnapshot: rcsi.Valid && rcsi.Int64 == 1,
	}, nil
}

var (
	// "… - 15.0.4322.2 (X64) …", "Microsoft SQL Azure (RTM) - 12.0.2000.8".
	bannerVersionRE = regexp.MustCompile(`- ([0-9]+\.[0-9]+\.[0-9]+(?:\.[0-9]+)?)`)
	// "Microsoft SQL Server 2019 (RTM-CU22) …".
	bannerYearRE = regexp.MustCompile(`^Microsoft SQL Server (20[0-9]{2})`)
)

// ParseServer turns what detection read into Info: Product "sqlserver" for
// a banner that starts with "Microsoft SQL Server" or "Microsoft SQL Azure"
// or a known engine edition (else Product is empty); Version is
// ProductVersion, or the version in the banner when ProductVersion is
// empty; Variant follows the engine edition (VariantAzureSQLDatabase for 5,
// VariantAzureSQLManagedInstance for 8, …; empty for the boxed product);
// Mode is ModeReadCommittedSnapshot when the database has RCSI on; Banner
// is the first line of @@VERSION.
func ParseServer(s Server) dialects.Info {
	banner := strings.TrimSpace(s.Banner)
	if i := strings.IndexAny(banner, "\r\n"); i >= 0 {
		banner = strings.TrimSpace(banner[:i])
	}
	info := dialects.Info{Dialect: Name, Banner: banner}
	variant, knownEdition := variants[s.EngineEdition]
	if strings.HasPrefix(banner, "Microsoft SQL Server") || strings.HasPrefix(banner, "Microsoft SQL Azure") || knownEdition {
		info.Product = Product
	}
	info.Variant = variant
	info.Version = strings.TrimSpace(s.ProductVersion)
	if info.Version == "" {
		if m := bannerVersionRE.FindStringSubmatch(banner); m != nil {
			info.Version = m[1]
		}
	}
	if s.ReadCommittedSnapshot {
		info.Mode = ModeReadCommittedSnapshot
	}
	return info
}

// variants maps the engine editions schedlock knows to Info.Variant.
var variants = map[int]string{
	1:  "", // Personal or Desktop Engine (not available since 2005)
	2:  "", // Standard, Web, Business Intelligence
	3:  "", // Enterprise, Developer, Evaluation
	4:  "", // Express
	5:  VariantAzureSQLDatabase,
	6:  VariantAzureSynapse,
	8:  VariantAzureSQLManagedInstance,
	9:  VariantAzureSQLEdge,
	11: VariantAzureSynapseServerless,
}

// ReleaseName is the product release of a ProductVersion, e.g. "SQL Server
// 2019" for "15.0.4322.2", or "" for versions it does not know. Azure SQL
// Database and Managed Instance report 12.x and 16.x and are not releases.
func ReleaseName(info dialects.Info) string {
	if info.Variant != "" && info.Variant != VariantAzureSQLEdge {
		return ""
	}
	if m := bannerYearRE.FindStringSubmatch(info.Banner); m != nil {
		return "SQL Server " + m[1]
	}
	if strings.HasPrefix(info.Version, "10.50.") {
		return "SQL Server 2008 R2"
	}
	major, _, _ := strings.Cut(info.Version, ".")
	if year, ok := releases[major]; ok {
		return "SQL Server " + year
	}
	return ""
}

var releases = map[string]string{
	"10": "2008", "11": "2012", "12": "2014", "13": "2016", "14": "2017", "15": "2019", "16": "2022", "17": "2025",
}

// isSynapse reports an Azure Synapse pool, which has neither sp_getapplock
// nor the OUTPUT clause the lease table needs.
func isSynapse(info dialects.Info) bool {
	return info.Variant == VariantAzureSynapse || info.Variant == VariantAzureSynapseServerless
}
