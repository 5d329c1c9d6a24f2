package dameng

import (
	"testing"

	"github.com/schedlock/schedlock/dialects/dialecttest"
)

// TestConformance runs the lock-contract suite live: the table strategy on
// every preset, and the DBMS_LOCK session strategy (with the kill check)
// when the server has DBMS_LOCK installed. The user needs CREATE TABLE;
// for the session strategy EXECUTE on SYS.DBMS_LOCK, SELECT on V$LOCK,
// V$SESSIONS and SYS.DBMS_LOCK_ALLOCATED, and the right to call
// SP_CLOSE_SESSION (DBA).
func TestConformance(t *testing.T) {
	db := liveDetected(t)
	dialecttest.Run(t, db, dialecttest.Options{})
}
