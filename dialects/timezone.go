package dialects

import (
	"regexp"
	"time"
	_ "time/tzdata" // zone names resolve in a static binary without /usr/share/zoneinfo
)

// Writer time zones of lock tables.
//
// ShedLock, unless configured with usingDbTime() or forceUtcTimeZone(),
// writes lock_until and locked_at as zone-less wall-clock times in its
// JVM's time zone. A Table with TimeZone set is read and written in that
// zone: the lease arithmetic stays on the database clock, in UTC, and is
// converted to the zone's wall-clock time when a lease end or lock time is
// written, and back when one is read or compared. The zero TimeZone is
// UTC, which is what every table holds when no zone is named.
//
// In the hour a zone repeats when its clocks go back, a wall-clock time
// names two instants; it is read as the later one, so a lease never looks
// shorter than it is (one that ends in that hour may look held up to an
// hour longer). Wall-clock times in the hour skipped when clocks go
// forward are never written; one found there is read with the offset in
// force before the change.

// TimeZoneUTC and TimeZoneLocal are the zone names that are not IANA
// names: UTC (the default) and the host's own zone.
const (
	TimeZoneUTC   = "UTC"
	TimeZoneLocal = "Local"
)

var zoneNameRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_+\-]*(/[A-Za-z0-9_+\-]+)*$`)

// LoadTimeZone resolves a writer time-zone name: an IANA name such as
// Europe/Berlin, UTC or Local (the host's zone). "" and UTC give nil, which
// means UTC. Anything else gives an error matching ErrInvalid.
func LoadTimeZone(name string) (*time.Location, error) {
	if name == "" || name == TimeZoneUTC {
		return nil, nil
	}
	if name == TimeZoneLocal {
		return time.Local, nil
	}
	if len(name) > 64 || !zoneNameRE.MatchString(name) {
		return nil, invalidf("time zone %q is not a zone name: use an IANA name such as Europe/Berlin or America/New_York, or UTC or Local", name)
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, invalidf("unknown time zone %q: use an IANA name such as Europe/Berlin or America/New_York, or UTC or Local", name)
	}
	return loc, nil
}

// ZoneFrame is a writer time zone's UTC offsets around one moment: Before
// for instants before the zone's nearest change of offset, After from it
// on. A zone with no change nearby has Before == After. Lease-table SQL
// renders a frame as literals, so a frame stays valid for months: from
// halfway after one change to halfway before the next.
type ZoneFrame struct {
	// SwitchUnixMs is the instant of the change, in milliseconds since the
	// Unix epoch; 0 when Before == After.
	SwitchUnixMs int64
	// Before and After are the offsets east of UTC.
	Before, After time.Duration
}

// Fixed reports whether the frame has one offset.
func (f ZoneFrame) Fixed() bool { return f.Before == f.After }

// Switch is the instant of the change, in UTC.
func (f ZoneFrame) Switch() time.Time { return time.UnixMilli(f.SwitchUnixMs).UTC() }

// LocalSwitch is the first wall-clock time of the After offset, as a UTC
// time value: wall-clock times from it on are read with After.
func (f ZoneFrame) LocalSwitch() time.Time { return f.Switch().Add(f.After) }

// maxFrameReach is how far from a moment a change of offset may lie and
// still be part of its frame; past it the zone has a fixed offset there.
const maxFrameReach = 400 * 24 * time.Hour

// FrameAt is loc's frame around instant at: the change of offset nearest
// to at, and the offsets on either side of it. A nil loc is UTC.
func FrameAt(loc *time.Location, at time.Time) ZoneFrame {
	if loc == nil {
		return ZoneFrame{}
	}
	local := at.In(loc)
	_, off := local.Zone()
	cur := time.Duration(off) * time.Second
	start, end := local.ZoneBounds()
	prevDist, nextDist := maxFrameReach, maxFrameReach
	if !start.IsZero() {
		prevDist = at.Sub(start)
	}
	if !end.IsZero() {
		nextDist = end.Sub(at)
	}
	switch {
	case prevDist >= maxFrameReach && nextDist >= maxFrameReach:
		return ZoneFrame{Before: cur, After: cur}
	case prevDist < nextDist:
		return ZoneFrame{SwitchUnixMs: start.UnixMilli(), Before: offsetAt(loc, start.Add(-time.Second)), After: cur}
	default:
		return ZoneFrame{SwitchUnixMs: end.UnixMilli(), Before: cur, After: offsetAt(loc, end)}
	}
}

func offsetAt(loc *time.Location, t time.Time) time.Duration {
	_, off := t.In(loc).Zone()
	return time.Duration(off) * time.Second
}

// WallToUTC reads wall, a zone-less wall-clock time carried in a UTC time
// value, as a time in loc: in a repeated hour the later instant, in a
// skipped hour the offset in force before the change. A nil loc or a zero
// wall returns wall.
func WallToUTC(wall time.Time, loc *time.Location) time.Time {
	if loc == nil || wall.IsZero() {
		return wall
	}
	var best time.Time
	found := false
	for _, probe := range []time.Duration{-36 * time.Hour, 0, 36 * time.Hour} {
		off := offsetAt(loc, wall.Add(probe))
		cand := wall.Add(-off)
		if offsetAt(loc, cand) == off && (!found || cand.After(best)) {
			best, found = cand, true
		}
	}
	if !found { // a skipped wall-clock time: the offset before the change
		best = wall.Add(-offsetAt(loc, wall.Add(-36*time.Hour)))
	}
	return best.UTC()
}

// UTCToWall is instant t as the zone-less wall-clock time of loc, carried
// in a UTC time value (what a writer in loc stores). A nil loc returns t in
// UTC.
func UTCToWall(t time.Time, loc *time.Location) time.Time {
	if loc == nil {
		return t.UTC()
	}
	l := t.In(loc)
	return time.Date(l.Year(), l.Month(), l.Day(), l.Hour(), l.Minute(), l.Second(), l.Nanosecond(), time.UTC)
}

// setTimeZone sets s's writer time zone and its frame now.
func (s *Schema) setTimeZone(name string) error {
	loc, err := LoadTimeZone(name)
	if err != nil || loc == nil {
		return err
	}
	s.TimeZone, s.Zone = name, FrameAt(loc, time.Now())
	return nil
}

// Location is the writer time zone of s, nil for UTC.
func (s Schema) Location() *time.Location {
	loc, _ := LoadTimeZone(s.TimeZone)
	return loc
}

// KnownTablesIn is the Tables of ListOptions (and FindLock) that reads the
// known lock tables, as an empty list does, with their zone-less times in
// writer time zone zone; "" or UTC gives nil, the empty list.
func KnownTablesIn(zone string) []Table {
	if loc, _ := LoadTimeZone(zone); loc == nil {
		return nil
	}
	return []Table{{TimeZone: zone}}
}

// KnownTablesZone reports whether given, the Tables of ListOptions, asks
// for the known tables, and in which writer time zone: given is empty, or
// KnownTablesIn's one Table.
func KnownTablesZone(given []Table) (zone string, known bool) {
	switch {
	case len(given) == 0:
		return "", true
	case len(given) == 1 && given[0].Name == "" && given[0].Preset == "" && given[0].TimeZone != "":
		return given[0].TimeZone, true
	}
	return "", false
}
