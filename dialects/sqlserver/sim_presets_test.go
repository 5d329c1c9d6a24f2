package sqlserver

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/locktable/locktabletest"
	"github.com/schedlock/schedlock/internal/fakesql"
)

// nameColumnRE matches the catalog read of a name column (NameColumn).
var nameColumnRE = regexp.MustCompile(`(?s)^SELECT CASE WHEN c\.max_length < 0 .*\nFROM sys\.columns AS c JOIN sys\.types AS ty ON ty\.user_type_id = c\.user_type_id\nWHERE c\.object_id = OBJECT_ID\(N'([^']+)', N'U'\) AND c\.name = N'(\w+)';$`)

// nameColumn answers NameColumn from the simulated CREATE TABLE: no row
// for a missing table or column, else the nvarchar width, its unit, the
// collation the table declared and the type.
func (sim *simServer) nameColumn(q string) (fakesql.Response, error) {
	m := nameColumnRE.FindStringSubmatch(q)
	if m == nil || q != (Builder{}).NameColumn(dialects.Schema{Table: m[1], NameCol: m[2]}) {
		return fakesql.Response{}, fmt.Errorf("simulator: unexpected catalog read %q", q)
	}
	sim.mu.Lock()
	defer sim.mu.Unlock()
	resp := fakesql.Response{Columns: []string{"", "", "", ""}}
	t := sim.tables[strings.ToLower(m[1])]
	if t == nil || t.nameCol != m[2] {
		return resp, nil
	}
	coll := "SQL_Latin1_General_CP1_CI_AS"
	if t.nameBinary {
		coll = nameCollation
	}
	resp.Rows = [][]any{{int64(t.nameUnits), dialects.NameUnitUTF16, coll, fmt.Sprintf("nvarchar(%d)", t.nameUnits)}}
	return resp, nil
}

// TestSysSchedLockRowsOnSimulator: on sys_sched_lock a release deletes the
// row; an early release keeps it until at-least and the locker deletes it
// then; a forced unlock deletes a row, expired or not; a name ending in a
// space is refused, not hashed.
func TestSysSchedLockRowsOnSimulator(t *testing.T) {
	db := newSim().detected(t)
	ctx := t.Context()
	tl, err := db.TableLocker(dialects.Table{Preset: dialects.PresetSysSchedLock})
	if err != nil {
		t.Fatal(err)
	}
	if err := tl.CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	gone := func(name string) bool {
		t.Helper()
		_, found, err := tl.Inspect(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		return !found
	}
	lease, err := tl.Acquire(ctx, "now", dialects.Options{Owner: "a"})
	if err != nil {
		t.Fatal(err)
	}
	if err := lease.Release(ctx); err != nil || !gone("now") {
		t.Fatalf("release = %v; want the row deleted", err)
	}
	lease, err = tl.Acquire(ctx, "kept", dialects.Options{Owner: "a", AtMost: time.Minute, AtLeast: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := lease.Release(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-dialects.Freed(lease):
	case <-time.After(20 * time.Second):
		t.Fatal("the kept row's deletion did not finish")
	}
	if !gone("kept") {
		t.Fatal("the row an early release kept is still there after at-least")
	}
	if _, err := tl.Acquire(ctx, "forced", dialects.Options{Owner: "a"}); err != nil {
		t.Fatal(err)
	}
	if done, err := tl.Expire(ctx, "forced"); err != nil || !done || !gone("forced") {
		t.Fatalf("forced unlock = %v, %v; want the row deleted", done, err)
	}
	_, err = tl.Acquire(ctx, "trailing ", dialects.Options{Owner: "a"})
	var unstorable *dialects.UnstorableNameError
	if !errors.As(err, &unstorable) || !errors.Is(err, dialects.ErrInvalid) {
		t.Fatalf("acquire of a name ending in a space = %v; want an UnstorableNameError", err)
	}
}

// TestExpireOnSimulator: a forced unlock ends a live lease and reports an
// ended one, on every preset table (the simulator runs the Expire UPDATE,
// or sys_sched_lock's DELETE, from its text).
func TestExpireOnSimulator(t *testing.T) {
	for _, preset := range dialects.Presets() {
		t.Run(preset, func(t *testing.T) {
			db := newSim().detected(t)
			tl, err := db.TableLocker(dialects.Table{Preset: preset})
			if err != nil {
				t.Fatal(err)
			}
			if err := tl.CreateTable(t.Context()); err != nil {
				t.Fatal(err)
			}
			locktabletest.CheckExpire(t, tl)
		})
	}
}
