package dialects

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestResolveAdminTable(t *testing.T) {
	cases := []struct {
		in      Table
		want    Table
		wantErr string
	}{
		{Table{}, Table{Preset: PresetSchedlock, Name: "schedlock"}, ""},
		{Table{Preset: PresetShedlock}, Table{Preset: PresetShedlock, Name: "shedlock"}, ""},
		{Table{Preset: PresetLiquibase}, Table{Preset: PresetLiquibase, Name: "DATABASECHANGELOGLOCK"}, ""},
		{Table{Name: "SHEDLOCK"}, Table{Preset: PresetShedlock, Name: "SHEDLOCK"}, ""},
		{Table{Name: "ops.databasechangeloglock"}, Table{Preset: PresetLiquibase, Name: "ops.databasechangeloglock"}, ""},
		{Table{Name: "job_lock"}, Table{Name: "job_lock"}, ""},
		{Table{Preset: PresetSysSchedLock, Name: "ops.jobs"}, Table{Preset: PresetSysSchedLock, Name: "ops.jobs"}, ""},
		{Table{Preset: "quartz"}, Table{}, `unknown preset "quartz": use one of schedlock, shedlock, sys_sched_lock, liquibase`},
		{Table{Name: "a; DROP TABLE x"}, Table{}, "not a plain identifier"},
	}
	for _, tc := range cases {
		got, err := ResolveAdminTable(tc.in)
		if tc.wantErr != "" {
			if err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ResolveAdminTable(%+v) error = %v, want ErrInvalid saying %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ResolveAdminTable(%+v) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
}

func TestExpectedColumnsAndShape(t *testing.T) {
	want := map[string][]string{
		PresetSchedlock:    {"name", "lock_until", "locked_at", "locked_by", "token"},
		PresetShedlock:     {"name", "lock_until", "locked_at", "locked_by"},
		PresetSysSchedLock: {"lock_name", "expire_time", "acquire_time", "lock_owner"},
		PresetLiquibase:    {"ID", "LOCKED", "LOCKGRANTED", "LOCKEDBY"},
	}
	for preset, cols := range want {
		got, err := ExpectedColumns(preset)
		if err != nil || !reflect.DeepEqual(got, cols) {
			t.Errorf("ExpectedColumns(%s) = %v, %v; want %v", preset, got, err, cols)
		}
	}

	// Columns compare without regard to case, as databases report them.
	if err := CheckColumns("DATABASECHANGELOGLOCK", PresetLiquibase, []string{"id", "locked", "lockgranted", "lockedby"}); err != nil {
		t.Errorf("lower-case Liquibase columns: %v", err)
	}
	err := CheckColumns("shedlock", PresetShedlock, []string{"name", "until", "locked_at", "locked_by"})
	var shape *ShapeError
	if !errors.As(err, &shape) || !errors.Is(err, ErrInvalid) {
		t.Fatalf("missing lock_until: %v (%T), want a *ShapeError matching ErrInvalid", err, err)
	}
	if !reflect.DeepEqual(shape.Missing, []string{"lock_until"}) {
		t.Errorf("missing = %v", shape.Missing)
	}
	for _, s := range []string{"table shedlock is not a shedlock table", "expected columns name, lock_until, locked_at, locked_by", "missing lock_until", "it has name, until, locked_at, locked_by"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not say %q", err, s)
		}
	}
}

func TestMatchPreset(t *testing.T) {
	cases := []struct {
		cols []string
		want string
	}{
		{[]string{"name", "lock_until", "locked_at", "locked_by", "token"}, PresetSchedlock},
		{[]string{"NAME", "LOCK_UNTIL", "LOCKED_AT", "LOCKED_BY"}, PresetShedlock},
		{[]string{"lock_name", "lock_owner", "acquire_time", "expire_time", "remark"}, PresetSysSchedLock},
		{[]string{"ID", "LOCKED", "LOCKGRANTED", "LOCKEDBY"}, PresetLiquibase},
	}
	for _, tc := range cases {
		got, err := MatchPreset("t", tc.cols)
		if err != nil || got != tc.want {
			t.Errorf("MatchPreset(%v) = %q, %v; want %q", tc.cols, got, err, tc.want)
		}
	}
	_, err := MatchPreset("jobs", []string{"id", "payload"})
	var shape *ShapeError
	if !errors.As(err, &shape) || shape.Preset != "" {
		t.Fatalf("no preset matches: %v", err)
	}
	for _, s := range []string{"table jobs matches no lock-table layout", "shedlock (name, lock_until, locked_at, locked_by)", "liquibase (ID, LOCKED, LOCKGRANTED, LOCKEDBY)", "it has id, payload"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not say %q", err, s)
		}
	}
}

func TestParseLockState(t *testing.T) {
	for _, s := range LockStates() {
		got, err := ParseLockState(" " + strings.ToUpper(string(s)) + " ")
		if err != nil || got != s {
			t.Errorf("ParseLockState(%q) = %q, %v", s, got, err)
		}
	}
	_, err := ParseLockState("zombie")
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "use one of held, paused, waiting, expired, stale, free") {
		t.Errorf("ParseLockState(zombie) = %v", err)
	}
}

func TestTableRowState(t *testing.T) {
	now := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	cases := []struct {
		row  Row
		want LockState
	}{
		{Row{Owner: "a", Until: now.Add(time.Millisecond), DBNow: now}, StateHeld},
		{Row{Owner: "a", Until: now, DBNow: now}, StateExpired},
		{Row{Owner: "a", Until: now.Add(-time.Hour), DBNow: now}, StateExpired},
		{Row{Owner: "", Until: now.Add(-time.Hour), DBNow: now}, StateFree},
		{Row{Owner: "", Until: now.Add(time.Hour), DBNow: now}, StateHeld},
	}
	for _, tc := range cases {
		if got := TableRowState(tc.row); got != tc.want {
			t.Errorf("TableRowState(%+v) = %s, want %s", tc.row, got, tc.want)
		}
	}
}

func TestLiquibaseEntry(t *testing.T) {
	at := time.Date(2024, 5, 1, 9, 0, 0, 0, time.UTC)
	e := LiquibaseEntry("DATABASECHANGELOGLOCK", LiquibaseRow{Locked: true, Owner: "build-7 (10.0.0.5)", LockedAt: at, DBNow: at.Add(90 * time.Second)})
	if e.Name != "liquibase" || e.State != StateHeld || e.Owner != "build-7 (10.0.0.5)" || e.Source != "DATABASECHANGELOGLOCK" || e.Preset != PresetLiquibase || e.Age() != 90*time.Second {
		t.Errorf("held entry %+v (age %s)", e, e.Age())
	}
	if e := LiquibaseEntry("DATABASECHANGELOGLOCK", LiquibaseRow{}); e.State != StateFree || e.Age() != 0 {
		t.Errorf("free entry %+v", e)
	}
}

func TestFilterAndSort(t *testing.T) {
	locks := []LockEntry{
		{Name: "report-b", State: StateExpired, Source: "shedlock"},
		{Name: "", Key: "4097083626", State: StateHeld, Source: "pg_locks"},
		{Name: "report-a", State: StateWaiting, Source: "pg_locks"},
		{Name: "report-a", State: StateHeld, Source: "pg_locks"},
		{Name: "cleanup", State: StateFree, Source: "shedlock"},
	}
	names := func(ls []LockEntry) []string {
		var out []string
		for _, e := range ls {
			out = append(out, e.Name+"/"+e.Key+"/"+string(e.State))
		}
		return out
	}
	cases := []struct {
		opts ListOptions
		want []string
	}{
		{ListOptions{}, []string{"/4097083626/held", "report-a//held", "report-a//waiting", "report-b//expired"}},
		{ListOptions{All: true}, []string{"/4097083626/held", "cleanup//free", "report-a//held", "report-a//waiting", "report-b//expired"}},
		{ListOptions{States: []LockState{StateFree}}, []string{"cleanup//free"}},
		{ListOptions{Names: []string{"report-*"}}, []string{"report-a//held", "report-a//waiting", "report-b//expired"}},
		{ListOptions{Names: []string{"4097*"}}, []string{"/4097083626/held"}},
		{ListOptions{Names: []string{"report-?"}, States: []LockState{StateHeld, StateExpired}}, []string{"report-a//held", "report-b//expired"}},
	}
	for _, tc := range cases {
		in := append([]LockEntry(nil), locks...)
		got := FilterLocks(in, tc.opts)
		SortLocks(got)
		if !reflect.DeepEqual(names(got), tc.want) {
			t.Errorf("%+v: got %v, want %v", tc.opts, names(got), tc.want)
		}
	}
}

func TestListingUnavailableError(t *testing.T) {
	err := error(&ListingUnavailableError{Reason: "performance_schema is OFF", Enable: "start the server with performance_schema=ON"})
	if !errors.Is(err, ErrUnsupported) {
		t.Error("does not match ErrUnsupported")
	}
	if got := err.Error(); got != "cannot list session locks: performance_schema is OFF; to enable: start the server with performance_schema=ON" {
		t.Errorf("message %q", got)
	}
}
