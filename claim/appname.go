package claim

import (
	"os"
	"path/filepath"
)

// applicationName is the name the connections give themselves in the
// server's session views: the program's base name.
func applicationName() string {
	if len(os.Args) == 0 || os.Args[0] == "" {
		return "schedlock"
	}
	return filepath.Base(os.Args[0])
}
