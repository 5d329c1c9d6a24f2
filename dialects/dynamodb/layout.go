package dynamodb

import (
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/schedlock/schedlock/dialects"
)

// layout is a preset's attribute names in one table.
type layout struct {
	schema dialects.Schema
	table  string
	key    string // the key attribute: the lock name
	until  string
	at     string
	by     string
	token  string // "" on the ShedLock layout
}

// ShedLock's names (DynamoDBLockProvider's ID, LOCK_UNTIL, LOCKED_AT and
// LOCKED_BY) and its documented table name.
const (
	shedlockTable = "Shedlock"
	shedlockKey   = "_id"
	shedlockUntil = "lockUntil"
	shedlockAt    = "lockedAt"
	shedlockBy    = "lockedBy"
)

// newLayout is the layout of preset in table.
func newLayout(preset, table string) layout {
	if preset == dialects.PresetShedlock {
		s := dialects.Schema{Preset: preset, Table: table, NameCol: shedlockKey, OwnerCol: shedlockBy, LockedAtCol: shedlockAt, UntilCol: shedlockUntil}
		return layout{schema: s, table: table, key: shedlockKey, until: shedlockUntil, at: shedlockAt, by: shedlockBy}
	}
	s := dialects.Schema{Preset: dialects.PresetSchedlock, Table: table, NameCol: "name", OwnerCol: "locked_by", LockedAtCol: "locked_at", UntilCol: "lock_until", TokenCol: "token"}
	return layout{schema: s, table: table, key: s.NameCol, until: s.UntilCol, at: s.LockedAtCol, by: s.OwnerCol, token: s.TokenCol}
}

// defaultTable is the table of a preset when neither the DSN nor the
// caller names one.
func defaultTable(preset string) string {
	if preset == dialects.PresetShedlock {
		return shedlockTable
	}
	return dialects.PresetSchedlock
}

// names are the expression attribute names every request uses: #k the
// key, #u lock_until, #a locked_at, #b locked_by, #t the token. Names in
// expressions go through them because DynamoDB reserves NAME, OWNER and
// TOKEN, among hundreds of words.
func (l layout) names(withToken bool) map[string]string {
	m := map[string]string{"#u": l.until, "#a": l.at, "#b": l.by}
	if withToken && l.token != "" {
		m["#t"] = l.token
	}
	return m
}

// keyOf is the item key of the lock called name.
func (l layout) keyOf(name string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{l.key: &types.AttributeValueMemberS{Value: name}}
}

// isoLayout is how lock times are written: ShedLock's Utils.toIsoString
// (an instant in UTC with exactly three fraction digits and a Z), so that
// the strings compare as the instants do.
const isoLayout = "2006-01-02T15:04:05.000Z"

// iso writes t as isoLayout.
func iso(t time.Time) string { return t.UTC().Format(isoLayout) }

// s is a string attribute value.
func sv(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }

// item is a lock item as read.
type item struct {
	name      string
	owner     string
	lockedAt  time.Time
	lockedRaw string // locked-at as stored: the ShedLock layout's acquire identity
	until     time.Time
	token     int64
	hasToken  bool
}

// decode reads a lock item; ok is false for an item without a name.
func (l layout) decode(m map[string]types.AttributeValue) (it item, ok bool) {
	str := func(k string) string {
		if v, isS := m[k].(*types.AttributeValueMemberS); isS {
			return v.Value
		}
		return ""
	}
	it.name = str(l.key)
	if it.name == "" {
		return it, false
	}
	it.owner = str(l.by)
	it.lockedRaw = str(l.at)
	it.lockedAt = parseISO(it.lockedRaw)
	it.until = parseISO(str(l.until))
	if l.token != "" {
		if v, isN := m[l.token].(*types.AttributeValueMemberN); isN {
			it.token, _ = strconv.ParseInt(v.Value, 10, 64)
			it.hasToken = true
		}
	}
	return it, true
}

// parseISO reads a stored instant: isoLayout, or any RFC 3339 time a
// ShedLock node on another formatter may write; zero when unreadable.
func parseISO(v string) time.Time {
	if v == "" {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}
	}
	return t.UTC()
}

// row is the item as a dialects.Row read at now (host times).
func (it item) row(now time.Time) dialects.Row {
	return dialects.Row{Name: it.name, Owner: it.owner, Token: it.token, HasToken: it.hasToken,
		LockedAt: it.lockedAt, Until: it.until, DBNow: now.UTC(), HostTimes: true}
}
