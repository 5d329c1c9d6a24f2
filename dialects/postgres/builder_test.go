package postgres

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/locktable"
	"github.com/schedlock/schedlock/dialects/locktable/locktabletest"
	"github.com/schedlock/schedlock/internal/golden"
)

// renderStmt writes a statement with its bindings, as the golden files hold it.
func renderStmt(s locktable.Stmt) string {
	args := make([]string, len(s.Args))
	for i, a := range s.Args {
		args[i] = fmt.Sprintf("$%d=%s", i+1, locktabletest.ArgName(a))
	}
	if len(args) == 0 {
		args = []string{"(none)"}
	}
	return fmt.Sprintf("-- args: %s\n-- result: %s\n%s\n", strings.Join(args, " "), locktabletest.ResultName(s.Result), s.SQL)
}

// TestBuilderGolden pins every statement of every preset; run with -update
// after an intended change and review the diff.
func TestBuilderGolden(t *testing.T) {
	b := Builder{}
	for _, preset := range dialects.Presets() {
		s, err := dialects.Table{Preset: preset}.Schema()
		if err != nil {
			t.Fatal(err)
		}
		for _, op := range append(locktabletest.Ops(b, s), locktabletest.PresetOps(b, s)...) {
			golden.Check(t, filepath.Join("testdata", preset+"."+op.Name+".golden"), renderStmt(op.Stmt))
		}
		golden.Check(t, filepath.Join("testdata", preset+".name-column.golden"), b.NameColumn(s)+"\n")
		golden.Check(t, filepath.Join("testdata", preset+".create.golden"), b.Create(s)+"\n")
	}
}

// TestBuilderGoldenTimeZone pins the statements of ShedLock's table
// written in New York's time zone, around a change of offset.
func TestBuilderGoldenTimeZone(t *testing.T) {
	b := Builder{}
	s, err := locktabletest.ZonedSchema(locktabletest.ZoneGoldenTable, locktabletest.ZoneGoldenAt)
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range locktabletest.Ops(b, s) {
		golden.Check(t, filepath.Join("testdata", "shedlock_new_york."+op.Name+".golden"), renderStmt(op.Stmt))
	}
}

// TestBuilderBindsEveryPlaceholder checks that each $n in a statement has
// exactly one Arg and no Arg lacks its $n.
func TestBuilderBindsEveryPlaceholder(t *testing.T) {
	b := Builder{}
	for _, preset := range dialects.Presets() {
		s, _ := dialects.Table{Preset: preset}.Schema()
		for _, o := range append(locktabletest.Ops(b, s), locktabletest.PresetOps(b, s)...) {
			op, st := o.Name, o.Stmt
			for i := 1; i <= len(st.Args); i++ {
				if !strings.Contains(st.SQL, fmt.Sprintf("$%d::", i)) {
					t.Errorf("%s %s: $%d is bound but not used", preset, op, i)
				}
			}
			if strings.Contains(st.SQL, fmt.Sprintf("$%d", len(st.Args)+1)) {
				t.Errorf("%s %s: uses $%d but binds %d args", preset, op, len(st.Args)+1, len(st.Args))
			}
			if strings.Contains(st.SQL, "now()") || strings.Contains(st.SQL, "CURRENT_TIMESTAMP") {
				t.Errorf("%s %s: uses the transaction start time instead of clock_timestamp()", preset, op)
			}
		}
	}
}

func TestMaxNameRunes(t *testing.T) {
	want := map[string]int{dialects.PresetSchedlock: 512, dialects.PresetShedlock: 64, dialects.PresetSysSchedLock: 128}
	for preset, n := range want {
		s, _ := dialects.Table{Preset: preset, Name: "custom_name"}.Schema()
		if got := (Builder{}).MaxNameRunes(s); got != n {
			t.Errorf("MaxNameRunes(%s) = %d, want %d", preset, got, n)
		}
	}
}

func TestIsMissingTable(t *testing.T) {
	missing := fmt.Errorf("prepare: %w", &pgconn.PgError{Code: "42P01", Message: `relation "x" does not exist`})
	if !(Builder{}).IsMissingTable(missing) {
		t.Error("42P01 not recognised as a missing table")
	}
	for _, err := range []error{nil, errors.New("42P01"), &pgconn.PgError{Code: "42501"}} {
		if (Builder{}).IsMissingTable(err) {
			t.Errorf("IsMissingTable(%v) = true", err)
		}
	}
}
