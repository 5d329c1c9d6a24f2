package mongodb

import (
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/schedlock/schedlock/dialects"
)

// The fields of a lock document. Both layouts are ShedLock's
// (MongoLockProvider: _id, lockUntil, lockedAt, lockedBy); the native one
// adds the fencing token.
const (
	fieldName     = "_id"
	fieldUntil    = "lockUntil"
	fieldLockedAt = "lockedAt"
	fieldOwner    = "lockedBy"
	fieldToken    = "token"
)

// layout is a preset on one collection.
type layout struct {
	schema dialects.Schema
	coll   string
	token  bool // the native layout: a token field, $inc on every acquire
}

// layoutOf resolves t: the native preset's collection is the DSN's
// collection option for the default table name ("schedlock"), else the
// table name; the shedlock preset's is ShedLock's "shedLock" for the
// default name, else the table name. Other presets are refused.
func (b *Backend) layoutOf(t dialects.Table) (layout, error) {
	preset := t.Preset
	if preset == "" {
		preset = dialects.PresetSchedlock
	}
	if preset != dialects.PresetSchedlock && preset != dialects.PresetShedlock {
		return layout{}, dialects.Invalidf("the MongoDB backend has the schedlock and shedlock layouts, not the %s preset", preset)
	}
	if t.TimeZone != "" && !strings.EqualFold(t.TimeZone, "UTC") {
		return layout{}, dialects.Invalidf("MongoDB keeps times as UTC dates: a writer time zone (%s) does not apply", t.TimeZone)
	}
	l := layout{token: preset == dialects.PresetSchedlock}
	// The presets' default table names (what dialects.Table.Schema and
	// ResolveAdminTable fill in) mean the default collections.
	isDefault := t.Name == "" || preset == dialects.PresetSchedlock && t.Name == DefaultCollection ||
		preset == dialects.PresetShedlock && strings.EqualFold(t.Name, dialects.PresetShedlock)
	switch {
	case !isDefault:
		if err := checkCollection(t.Name); err != nil {
			return layout{}, err
		}
		l.coll = t.Name
	case preset == dialects.PresetShedlock:
		l.coll = ShedLockCollection
	case b.cfg.collection != "":
		l.coll = b.cfg.collection
	default:
		l.coll = DefaultCollection
	}
	l.schema = dialects.Schema{Preset: preset, Table: l.coll, NameCol: fieldName, OwnerCol: fieldOwner,
		LockedAtCol: fieldLockedAt, UntilCol: fieldUntil}
	if l.token {
		l.schema.TokenCol = fieldToken
	}
	return l, nil
}

// doc is a decoded lock document.
type doc struct {
	name     string
	owner    string
	lockedAt time.Time
	until    time.Time
	token    int64
	hasToken bool
}

// decode reads a lock document; ok is false when its _id is not a string
// (no lock of ours).
func decode(raw bson.Raw) (doc, bool) {
	var d doc
	var ok bool
	id, err := raw.LookupErr(fieldName)
	if err != nil {
		return d, false
	}
	if d.name, ok = id.StringValueOK(); !ok {
		return d, false
	}
	if v, err := raw.LookupErr(fieldOwner); err == nil {
		d.owner, _ = v.StringValueOK()
	}
	d.lockedAt = dateOf(raw, fieldLockedAt)
	d.until = dateOf(raw, fieldUntil)
	if v, err := raw.LookupErr(fieldToken); err == nil {
		d.token, d.hasToken = v.AsInt64OK()
	}
	return d, true
}

// dateOf reads a date field (a BSON date; a timestamp as ShedLock's
// currentTimestamp writes lockedAt is read as its seconds).
func dateOf(raw bson.Raw, field string) time.Time {
	v, err := raw.LookupErr(field)
	if err != nil {
		return time.Time{}
	}
	if dt, ok := v.DateTimeOK(); ok {
		return time.UnixMilli(dt).UTC()
	}
	if ts, _, ok := v.TimestampOK(); ok {
		return time.Unix(int64(ts), 0).UTC()
	}
	return time.Time{}
}

// row is d as a lease-table row read at now (the server's clock).
func (d doc) row(now time.Time) dialects.Row {
	return dialects.Row{Name: d.name, Owner: d.owner, Token: d.token, HasToken: d.hasToken,
		LockedAt: d.lockedAt, Until: d.until, DBNow: now}
}

// containsFold reports whether s contains sub, ignoring case.
func containsFold(s, sub string) bool {
	return strings.Contains(strings.ToLower(s), strings.ToLower(sub))
}
