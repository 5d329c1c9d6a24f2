package postgres

import (
	"context"
	"strconv"
	"strings"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/sqlkit"
)

var _ sqlkit.SessionKeyFinder = (*LockAdmin)(nil)

// advisoryPairFilter narrows advisoryLocksSQL to one pair of int4 keys.
const advisoryPairFilter = ` AND l.objsubid = 2 AND l.classid::bigint = $1::bigint AND l.objid::bigint = $2::bigint`

// SessionLockByKey returns the backend holding the advisory lock with key
// (a bigint in decimal, or "k1,k2" for two int4 keys) in the current
// database, with the Tool of a migration tool's key.
func (a *LockAdmin) SessionLockByKey(ctx context.Context, key string) (dialects.LockEntry, bool, error) {
	filter, classid, objid, err := parseAdvisoryKey(key)
	if err != nil {
		return dialects.LockEntry{}, false, dialects.Wrap(Name, "find session lock", err)
	}
	entries, err := a.query(ctx, advisoryLocksSQL(a.catalog())+filter+advisoryOrder, nil, int64(classid), int64(objid))
	if err == nil {
		err = a.labelTools(ctx, entries)
	}
	if err != nil {
		return dialects.LockEntry{}, false, dialects.Wrap(Name, "find session lock", err)
	}
	for _, e := range entries {
		if e.State == dialects.StateHeld {
			return e, true, nil
		}
	}
	return dialects.LockEntry{}, false, nil
}

// parseAdvisoryKey reads a key as pg_locks rows are listed: the filter
// that selects it and its classid and objid.
func parseAdvisoryKey(key string) (filter string, classid, objid uint32, err error) {
	key = strings.TrimSpace(key)
	if k1, k2, pair := strings.Cut(key, ","); pair {
		a, err1 := strconv.ParseInt(strings.TrimSpace(k1), 10, 32)
		b, err2 := strconv.ParseInt(strings.TrimSpace(k2), 10, 32)
		if err1 != nil || err2 != nil {
			return "", 0, 0, dialects.Invalidf("advisory key %q is not two int4 numbers (k1,k2)", key)
		}
		return advisoryPairFilter, uint32(int32(a)), uint32(int32(b)), nil
	}
	k, err := strconv.ParseInt(key, 10, 64)
	if err != nil {
		return "", 0, 0, dialects.Invalidf("advisory key %q is not a bigint (as locks ls shows it) or a pair k1,k2", key)
	}
	classid, objid = KeyParts(k)
	return advisoryKeyFilter, classid, objid, nil
}
