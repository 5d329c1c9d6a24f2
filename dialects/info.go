package dialects

// Info is what detection learned about a database.
type Info struct {
	// Dialect is the registry name of the wire family: postgres, mysql, sqlite, …
	Dialect string `json:"dialect"`
	// Product is the actual product: postgresql, kingbase, opengauss,
	// cockroachdb, yugabytedb, mysql, mariadb, tidb, sqlite, …
	Product string `json:"product"`
	// Variant marks a managed or flavoured build: "aurora", "azure", … or "".
	Variant string `json:"variant"`
	// Version is the product's own version, e.g. "15.20", "10.11.19", "v8.5.6".
	Version string `json:"version"`
	// Mode is the compatibility mode where the product has one, else "".
	Mode string `json:"mode"`
	// Banner is the raw version string the server returned.
	Banner string `json:"banner"`
}

// Product names used in Info.Product.
const (
	ProductPostgreSQL  = "postgresql"
	ProductKingbase    = "kingbase"
	ProductOpenGauss   = "opengauss"
	ProductCockroachDB = "cockroachdb"
	ProductYugabyteDB  = "yugabytedb"
	ProductMySQL       = "mysql"
	ProductMariaDB     = "mariadb"
	ProductTiDB        = "tidb"
	ProductSQLite      = "sqlite"
)
