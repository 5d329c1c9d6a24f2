package postgres

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/locktable"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

var argNames = map[locktable.Arg]string{
	locktable.ArgName:      "name",
	locktable.ArgOwner:     "owner",
	locktable.ArgToken:     "token",
	locktable.ArgAtMostMs:  "at_most_ms",
	locktable.ArgAtLeastMs: "at_least_ms",
}

var resultNames = map[locktable.Result]string{
	locktable.ResultRow:          "row",
	locktable.ResultInsertID:     "insert_id",
	locktable.ResultRowsAffected: "rows_affected",
}

// renderStmt writes a statement with its bindings, as the golden files hold it.
func renderStmt(s locktable.Stmt) string {
	args := make([]string, len(s.Args))
	for i, a := range s.Args {
		args[i] = fmt.Sprintf("$%d=%s", i+1, argNames[a])
	}
	if len(args) == 0 {
		args = []string{"(none)"}
	}
	return fmt.Sprintf("-- args: %s\n-- result: %s\n%s\n", strings.Join(args, " "), resultNames[s.Result], s.SQL)
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
		stmts := map[string]string{
			"acquire": renderStmt(b.Acquire(s)),
			"refresh": renderStmt(b.Refresh(s)),
			"release": renderStmt(b.Release(s)),
			"expire":  renderStmt(b.Expire(s)),
			"inspect": renderStmt(b.Inspect(s)),
			"list":    renderStmt(b.List(s)),
			"create":  b.Create(s) + "\n",
		}
		for op, got := range stmts {
			path := filepath.Join("testdata", preset+"."+op+".golden")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("%s %s differs from %s:\n got:\n%s\nwant:\n%s", preset, op, path, got, want)
			}
		}
	}
}

// TestBuilderBindsEveryPlaceholder checks that each $n in a statement has
// exactly one Arg and no Arg lacks its $n.
func TestBuilderBindsEveryPlaceholder(t *testing.T) {
	b := Builder{}
	for _, preset := range dialects.Presets() {
		s, _ := dialects.Table{Preset: preset}.Schema()
		for op, st := range map[string]locktable.Stmt{
			"acquire": b.Acquire(s), "refresh": b.Refresh(s), "release": b.Release(s),
			"expire": b.Expire(s), "inspect": b.Inspect(s), "list": b.List(s),
		} {
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
	want := map[string]int{dialects.PresetSchedlock: 512, dialects.PresetShedlock: 64, dialects.PresetSysSchedLock: 64}
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
