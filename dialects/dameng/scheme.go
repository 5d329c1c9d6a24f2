package dameng

import "github.com/xo/dburl"

// init registers dm:// (alias dameng://) with dburl, which does not know
// it: the driver (database/sql name "dm") reads the URL
// dm://user:pass@host:5236?schema=S as it is.
func init() {
	if dburl.Protocols("dm") == nil {
		dburl.Register(dburl.Scheme{
			Name:      "dm",
			Generator: dburl.GenFromURL("dm://localhost:5236/"),
			Aliases:   []string{"dameng"},
			Dialect:   "dm",
			Desc:      "Dameng DM8",
		})
	}
}
