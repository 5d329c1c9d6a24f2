package locktabletest

import (
	"testing"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/locktable"
)

// fakeBuilder returns fixed statements naming their operation.
type fakeBuilder struct{}

func (fakeBuilder) Dialect() string                  { return "fake" }
func (fakeBuilder) MaxNameRunes(dialects.Schema) int { return 64 }
func (fakeBuilder) IsMissingTable(error) bool        { return false }
func (fakeBuilder) Create(s dialects.Schema) string  { return "CREATE " + s.Table }
func (fakeBuilder) Expire(dialects.Schema) locktable.Stmt {
	return stmt("EXPIRE", locktable.ResultRowsAffected, locktable.ArgName)
}
func (fakeBuilder) Inspect(dialects.Schema) locktable.Stmt {
	return stmt("INSPECT", locktable.ResultRow, locktable.ArgName)
}
func (fakeBuilder) List(dialects.Schema) locktable.Stmt { return stmt("LIST", locktable.ResultRow) }
func (fakeBuilder) Acquire(dialects.Schema) locktable.Stmt {
	return stmt("ACQUIRE", locktable.ResultInsertID, locktable.ArgName, locktable.ArgOwner, locktable.ArgAtMostMs)
}
func (fakeBuilder) Refresh(dialects.Schema) locktable.Stmt {
	return stmt("REFRESH", locktable.ResultRow, locktable.ArgAtMostMs, locktable.ArgToken)
}
func (fakeBuilder) Release(dialects.Schema) locktable.Stmt {
	return stmt("RELEASE", locktable.ResultRow, locktable.ArgAtLeastMs)
}

func stmt(sql string, r locktable.Result, args ...locktable.Arg) locktable.Stmt {
	return locktable.Stmt{SQL: sql, Args: args, Result: r}
}

func TestRender(t *testing.T) {
	got := Render(fakeBuilder{}, dialects.Schema{Table: "locks"})
	want := `-- acquire (result: insert_id; args: name, owner, at_most_ms)
ACQUIRE

-- refresh (result: row; args: at_most_ms, token)
REFRESH

-- release (result: row; args: at_least_ms)
RELEASE

-- expire (result: rows_affected; args: name)
EXPIRE

-- inspect (result: row; args: name)
INSPECT

-- list (result: row; args: )
LIST

-- create (max name runes: 64)
CREATE locks
`
	if got != want {
		t.Errorf("Render =\n%s\nwant\n%s", got, want)
	}
}

func TestParamPrefixNumbersArgs(t *testing.T) {
	note := Options{ParamPrefix: "@p"}.Note(stmt("X", locktable.ResultRow, locktable.ArgName, locktable.ArgOwner))
	if want := "result: row; args: @p1 name, @p2 owner"; note != want {
		t.Errorf("Note = %q, want %q", note, want)
	}
}

func TestRenderSectionsWithoutNote(t *testing.T) {
	got := RenderSections([]Section{{Op: "drop", SQL: "DROP t"}, {Op: "create", Note: "n", SQL: "C"}})
	if want := "-- drop\nDROP t\n\n-- create (n)\nC\n"; got != want {
		t.Errorf("RenderSections = %q, want %q", got, want)
	}
}

func TestUnknownNamesAreVisible(t *testing.T) {
	if got := ArgName(locktable.Arg(99)); got != "arg(99)" {
		t.Errorf("ArgName(99) = %q", got)
	}
	if got := ResultName(locktable.Result(99)); got != "result(99)" {
		t.Errorf("ResultName(99) = %q", got)
	}
}
