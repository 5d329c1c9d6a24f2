package sqlkit

import (
	"strings"

	"github.com/schedlock/schedlock/dialects"
)

// runApplicationPrefix starts the application name of the connections of
// `schedlock run`; the stored lock name follows it.
const runApplicationPrefix = "schedlock run "

// RunApplication is the application name `schedlock run` gives its
// connections for the lock stored as stored (NamespacedName): "schedlock
// run nightly-report". The listing reads the name back from it (see
// nameRunLocks), so it is part of the CLI's interface.
func RunApplication(stored string) string { return runApplicationPrefix + stored }

// nameRunLocks names the session locks the server knows only by a key
// derived from the name (PostgreSQL's advisory keys are hashes, see
// SessionKeyer) when their holder is a connection of `schedlock run`: the
// name after RunApplication's prefix in the holder's application name is
// taken only when its key is the lock's key. A name the server cut short
// (PostgreSQL keeps 63 bytes of application_name), an application name
// written in the DSN, or a session holding other locks too thus never
// names a lock wrongly; such locks stay known by their key. Other
// entries are left as they are.
func nameRunLocks(admin dialects.LockAdmin, entries []dialects.LockEntry) {
	keyer, ok := admin.(SessionKeyer)
	if !ok {
		return
	}
	for i := range entries {
		e := &entries[i]
		if e.Name != "" || e.Key == "" || e.Holder == nil {
			continue
		}
		name, ok := strings.CutPrefix(e.Holder.Application, runApplicationPrefix)
		if ok && dialects.CheckName(name) == nil && keyer.LockKey(name) == e.Key {
			e.Name = name
		}
	}
}
