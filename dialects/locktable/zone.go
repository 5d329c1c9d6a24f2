package locktable

import (
	"database/sql"
	"strconv"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// Zone renders, for one dialect, the conversions between the database
// clock's UTC and the wall-clock time of a schema's writer time zone
// (dialects.Schema.TimeZone), from the schema's frame as literals. Without
// a writer time zone both conversions return their expression unchanged,
// so the SQL is what it was before zones existed.
//
// Builders convert every value they write to lock_until or locked_at with
// ToLocal and every column they compare or compute with ToUTC: the lease
// arithmetic stays on the database clock. ToLocal and ToUTC name their
// expression Uses() times (when plus names its ms once); a dialect with
// positional placeholders binds the expression's arguments that many
// times.
type Zone struct {
	on    bool
	frame dialects.ZoneFrame
	plus  func(expr, ms string) string
	lit   func(wall time.Time) string
}

// NewZone is s's Zone for a dialect whose plus(expr, ms) adds ms, an
// integer SQL expression of milliseconds that may be negative, to the
// timestamp expr, and whose lit(wall) is the timestamp literal of a
// zone-less wall-clock time (carried in a UTC time value).
func NewZone(s dialects.Schema, plus func(expr, ms string) string, lit func(wall time.Time) string) Zone {
	return Zone{on: s.TimeZone != "", frame: s.Zone, plus: plus, lit: lit}
}

// Uses is how many times ToLocal and ToUTC name their expression: 2 when
// the frame holds a change of offset, else 1.
func (z Zone) Uses() int {
	if z.on && !z.frame.Fixed() {
		return 2
	}
	return 1
}

// ToLocal converts utc, a timestamp expression on the database clock in
// UTC, to the zone's wall-clock time.
func (z Zone) ToLocal(utc string) string {
	switch {
	case !z.on || (z.frame.Fixed() && z.frame.After == 0):
		return utc
	case z.frame.Fixed():
		return z.plus(utc, ms(z.frame.After))
	}
	return z.plus(utc, "(CASE WHEN "+utc+" < "+z.lit(z.frame.Switch())+" THEN "+ms(z.frame.Before)+" ELSE "+ms(z.frame.After)+" END)")
}

// ToUTC converts local, a zone-less wall-clock time of the zone (a
// column), to UTC. In a repeated hour it gives the later instant.
func (z Zone) ToUTC(local string) string {
	switch {
	case !z.on || (z.frame.Fixed() && z.frame.After == 0):
		return local
	case z.frame.Fixed():
		return z.plus(local, ms(-z.frame.After))
	}
	return z.plus(local, "(CASE WHEN "+local+" >= "+z.lit(z.frame.LocalSwitch())+" THEN "+ms(-z.frame.After)+" ELSE "+ms(-z.frame.Before)+" END)")
}

func ms(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }

// Repeat returns args n times over (a, b, a, b), for an expression whose
// arguments are bound once per use.
func Repeat(n int, args ...Arg) []Arg {
	out := make([]Arg, 0, n*len(args))
	for range n {
		out = append(out, args...)
	}
	return out
}

// frameNow is the writer time zone's frame at the host's now (the zero
// frame without a zone).
func (l *Locker) frameNow() dialects.ZoneFrame {
	if l.zone == nil {
		return dialects.ZoneFrame{}
	}
	now := time.Now
	if l.clock != nil {
		now = l.clock
	}
	return dialects.FrameAt(l.zone, now())
}

// sqlFor is the SQL of o rendered for frame, with whole-second lease ends
// when whole is set (see Schema.UntilWholeSeconds).
func (l *Locker) sqlFor(o op, frame dialects.ZoneFrame, whole bool) string {
	if frame == l.schema.Zone && whole == l.schema.UntilWholeSeconds {
		return l.stmts[o].spec.SQL
	}
	s := l.schema
	s.Zone = frame
	s.UntilWholeSeconds = whole
	return l.build(o, s).SQL
}

// build is the builder's statement of o for s.
func (l *Locker) build(o op, s dialects.Schema) Stmt {
	switch o {
	case opAcquire:
		return l.b.Acquire(s)
	case opRefresh:
		return l.b.Refresh(s)
	case opRelease:
		return l.b.Release(s)
	case opExpire:
		return l.b.Expire(s)
	case opInspect:
		return l.b.Inspect(s)
	case opList:
		return l.b.List(s)
	}
	rd, ok := l.b.(RowDeleter)
	if !ok || !s.ReleaseDeletesRow() {
		return Stmt{}
	}
	switch o {
	case opReleaseDelete:
		return rd.ReleaseDelete(s)
	case opSweep:
		return rd.Sweep(s)
	case opDelete:
		return rd.Delete(s)
	}
	return Stmt{}
}

// retire keeps a statement prepared for an earlier frame until Close: an
// operation in flight may still be using it.
func (l *Locker) retire(s *sql.Stmt) {
	l.retiredMu.Lock()
	l.retired = append(l.retired, s)
	l.retiredMu.Unlock()
}

// wallTime reads a lock time the table stores: milliseconds since the
// epoch of UTC, or with a writer time zone of the zone's wall-clock time.
func (l *Locker) wallTime(ms sql.NullInt64) time.Time {
	return dialects.WallToUTC(msTime(ms), l.zone)
}
