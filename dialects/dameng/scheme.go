package dameng

import "github.com/xo/dburl"

// urlScheme is dm:// (alias dameng://), which dburl does not know: the
// driver (database/sql name "dm") reads the URL
// dm://user:pass@host:5236?schema=S as it is.
var urlScheme = &dburl.Scheme{
	Name:      "dm",
	Generator: dburl.GenFromURL("dm://localhost:5236/"),
	Aliases:   []string{"dameng"},
	Dialect:   "dm",
	Desc:      "Dameng DM8",
}
