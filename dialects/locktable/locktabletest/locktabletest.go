// Package locktabletest renders a locktable.Builder's statements in the
// reviewable form the dialects' golden files hold:
//
//	-- acquire (result: row; args: name, owner, at_most_ms)
//	INSERT INTO …
//
//	-- refresh (result: row; args: at_most_ms, name, owner, token, token)
//	UPDATE …
//
// one section per statement (acquire, refresh, release, expire, inspect,
// list, then create), separated by a blank line. A dialect appends its own
// sections (drop, session statements, …) before rendering.
package locktabletest

import (
	"fmt"
	"strings"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/locktable"
)

// Section is one statement of a golden file: the header "-- <Op> (<Note>)"
// (just "-- <Op>" without a note) and the SQL on the lines after it.
type Section struct {
	Op, Note, SQL string
}

// Op is one named lease-table statement of a Builder.
type Op struct {
	Name string
	Stmt locktable.Stmt
}

// Ops are b's six lease-table statements for s in golden-file order:
// acquire, refresh, release, expire, inspect, list.
func Ops(b locktable.Builder, s dialects.Schema) []Op {
	return []Op{
		{"acquire", b.Acquire(s)},
		{"refresh", b.Refresh(s)},
		{"release", b.Release(s)},
		{"expire", b.Expire(s)},
		{"inspect", b.Inspect(s)},
		{"list", b.List(s)},
	}
}

// ArgName is the golden-file name of a: name, owner, token, at_most_ms or
// at_least_ms.
func ArgName(a locktable.Arg) string {
	switch a {
	case locktable.ArgName:
		return "name"
	case locktable.ArgOwner:
		return "owner"
	case locktable.ArgToken:
		return "token"
	case locktable.ArgAtMostMs:
		return "at_most_ms"
	case locktable.ArgAtLeastMs:
		return "at_least_ms"
	}
	return fmt.Sprintf("arg(%d)", int(a))
}

// ResultName is the golden-file name of r: row, insert_id or
// rows_affected.
func ResultName(r locktable.Result) string {
	switch r {
	case locktable.ResultRow:
		return "row"
	case locktable.ResultInsertID:
		return "insert_id"
	case locktable.ResultRowsAffected:
		return "rows_affected"
	}
	return fmt.Sprintf("result(%d)", int(r))
}

// Options adapt Sections to a dialect's conventions; the zero value is the
// common form.
type Options struct {
	// ParamPrefix, when set, numbers the arguments of a note with the
	// dialect's placeholders: "@p" writes "args: @p1 name, @p2 owner".
	// Empty writes "args: name, owner".
	ParamPrefix string
}

// Note is the header note of st: "result: <kind>; args: <a>, <b>".
func (o Options) Note(st locktable.Stmt) string {
	args := make([]string, len(st.Args))
	for i, a := range st.Args {
		args[i] = ArgName(a)
		if o.ParamPrefix != "" {
			args[i] = fmt.Sprintf("%s%d %s", o.ParamPrefix, i+1, args[i])
		}
	}
	return fmt.Sprintf("result: %s; args: %s", ResultName(st.Result), strings.Join(args, ", "))
}

// PresetOps are the statements b writes for s beyond the six of Ops:
// release-delete, sweep and delete on a table whose release deletes the
// row (a locktable.RowDeleter and dialects.Schema.ReleaseDeletesRow).
func PresetOps(b locktable.Builder, s dialects.Schema) []Op {
	rd, ok := b.(locktable.RowDeleter)
	if !ok || !s.ReleaseDeletesRow() {
		return nil
	}
	return []Op{
		{"release-delete", rd.ReleaseDelete(s)},
		{"sweep", rd.Sweep(s)},
		{"delete", rd.Delete(s)},
	}
}

// Sections are b's six lease-table statements for s, each with its note,
// then PresetOps, then the catalog read of the name column (name-column,
// a locktable.NameColumnBuilder's) and of the lease-end column's precision
// (until-precision, a locktable.UntilPrecisionBuilder's), then create with the note "max name
// runes: N".
func (o Options) Sections(b locktable.Builder, s dialects.Schema) []Section {
	var secs []Section
	for _, op := range append(Ops(b, s), PresetOps(b, s)...) {
		secs = append(secs, Section{op.Name, o.Note(op.Stmt), op.Stmt.SQL})
	}
	if ncb, ok := b.(locktable.NameColumnBuilder); ok {
		secs = append(secs, Section{"name-column", "result: width, unit, collation, type", ncb.NameColumn(s)})
	}
	if upb, ok := b.(locktable.UntilPrecisionBuilder); ok {
		secs = append(secs, Section{"until-precision", "result: fractional-second digits", upb.UntilPrecision(s)})
	}
	return append(secs, Section{"create", fmt.Sprintf("max name runes: %d", b.MaxNameRunes(s)), b.Create(s)})
}

// Sections are Options{}.Sections(b, s).
func Sections(b locktable.Builder, s dialects.Schema) []Section {
	return Options{}.Sections(b, s)
}

// RenderSections writes secs as a golden file: each header, its SQL as
// given, and a blank line between sections.
func RenderSections(secs []Section) string {
	var out strings.Builder
	for i, s := range secs {
		if i > 0 {
			out.WriteString("\n")
		}
		header := "-- " + s.Op
		if s.Note != "" {
			header += " (" + s.Note + ")"
		}
		fmt.Fprintf(&out, "%s\n%s\n", header, s.SQL)
	}
	return out.String()
}

// Render is RenderSections(Sections(b, s)): every lease-table statement of
// b for s, and its CREATE TABLE.
func Render(b locktable.Builder, s dialects.Schema) string {
	return RenderSections(Sections(b, s))
}

// ZoneGoldenTable is the table of the writer-time-zone golden files:
// ShedLock's, written by a JVM in New York.
var ZoneGoldenTable = dialects.Table{Preset: dialects.PresetShedlock, TimeZone: "America/New_York"}

// ZoneGoldenAt is the moment the writer-time-zone golden files are
// rendered at: ten days before New York's clocks go back on 2026-11-01,
// so the frame holds the change (EDT -4h, then EST -5h from 06:00 UTC).
var ZoneGoldenAt = time.Date(2026, 10, 22, 12, 0, 0, 0, time.UTC)

// ZonedSchema resolves t with its writer time zone's frame at instant at,
// so golden files do not depend on the day they run.
func ZonedSchema(t dialects.Table, at time.Time) (dialects.Schema, error) {
	s, err := t.Schema()
	if err != nil {
		return s, err
	}
	s.Zone = dialects.FrameAt(s.Location(), at)
	return s, nil
}

// ZoneCase is one conversion a dialect's Zone must make in the frame of
// ZoneGoldenTable at ZoneGoldenAt: From, a zone-less time (a UTC time
// value), to Want.
type ZoneCase struct {
	Name       string
	From, Want time.Time
}

func nov1(h, m int) time.Time { return time.Date(2026, 11, 1, h, m, 0, 0, time.UTC) }

// ZoneToUTCCases are New York wall-clock times read as instants: the
// repeated hour (01:00-02:00 on 2026-11-01) reads as the later instant.
var ZoneToUTCCases = []ZoneCase{
	{"summer time", nov1(0, 30), nov1(4, 30)},
	{"repeated hour, later instant", nov1(1, 30), nov1(6, 30)},
	{"standard time", nov1(2, 30), nov1(7, 30)},
}

// ZoneToLocalCases are instants written as New York wall-clock times: both
// passes of the repeated hour write 01:30.
var ZoneToLocalCases = []ZoneCase{
	{"first pass, EDT", nov1(5, 30), nov1(1, 30)},
	{"second pass, EST", nov1(6, 30), nov1(1, 30)},
	{"standard time", nov1(8, 0), nov1(3, 0)},
}
