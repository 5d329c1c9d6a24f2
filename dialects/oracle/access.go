package oracle

import "github.com/schedlock/schedlock/dialects"

// lockAccess is what Detect learned about the user's right to execute
// SYS.DBMS_LOCK. Detect stores it in Info.Facts, so it belongs to the one
// detected database.
type lockAccess struct {
	known   bool   // the probe gave a definite answer
	granted bool   // EXECUTE on SYS.DBMS_LOCK works
	user    string // the session user, for the GRANT
	err     error  // the probe's error when not granted or unknown
}

// accessOf returns the probe answer Detect recorded in info.Facts.
func accessOf(info dialects.Info) (lockAccess, bool) {
	a, ok := info.Facts.(*lockAccess)
	if !ok || a == nil {
		return lockAccess{}, false
	}
	return *a, true
}
