package oracle

import (
	"database/sql"
	"runtime"
	"sync"
	"weak"

	"github.com/schedlock/schedlock/dialects"
)

// lockAccess is what Detect learned about the user's right to execute
// SYS.DBMS_LOCK.
type lockAccess struct {
	known   bool   // the probe gave a definite answer
	granted bool   // EXECUTE on SYS.DBMS_LOCK works
	user    string // the session user, for the GRANT
	err     error  // the probe's error when not granted or unknown
}

// The probe answers, by database (for NewSessionLocker) and by Info (for
// Recommend, which sees nothing else). Entries for a *sql.DB go away when
// it is garbage collected.
var (
	accessByDB   sync.Map // weak.Pointer[sql.DB] → lockAccess
	accessByInfo sync.Map // dialects.Info → lockAccess
)

// rememberAccess records the probe answer of db, whose Info is info.
func rememberAccess(db *sql.DB, info dialects.Info, access lockAccess) {
	key := weak.Make(db)
	if _, loaded := accessByDB.Swap(key, access); !loaded {
		runtime.AddCleanup(db, func(k weak.Pointer[sql.DB]) { accessByDB.Delete(k) }, key)
	}
	accessByInfo.Store(info, access)
}

// accessForDB returns the probe answer Detect recorded for db.
func accessForDB(db *sql.DB) (lockAccess, bool) {
	v, ok := accessByDB.Load(weak.Make(db))
	if !ok {
		return lockAccess{}, false
	}
	return v.(lockAccess), true
}

// accessForInfo returns the probe answer of the last Detect that produced
// info.
func accessForInfo(info dialects.Info) (lockAccess, bool) {
	v, ok := accessByInfo.Load(info)
	if !ok {
		return lockAccess{}, false
	}
	return v.(lockAccess), true
}
