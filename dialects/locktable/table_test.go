package locktable_test

import (
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/locktable"
	"github.com/schedlock/schedlock/dialects/sqlite"
)

func TestMissingTableGivesCreateStatement(t *testing.T) {
	db := openDB(t)
	l, err := locktable.New(db, sqlite.Builder{}, dialects.Table{Preset: dialects.PresetShedlock})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx := ctxT(t)

	_, err = l.Acquire(ctx, "n", dialects.Options{})
	wantErr(t, err, dialects.ErrNoTable)
	var missing *dialects.MissingTableError
	if !errors.As(err, &missing) || missing.Table != "shedlock" || !strings.Contains(missing.CreateSQL, "CREATE TABLE IF NOT EXISTS shedlock") {
		t.Fatalf("error = %v, want a MissingTableError with the CREATE statement", err)
	}
	if !strings.Contains(err.Error(), "CREATE TABLE") {
		t.Fatalf("message %q does not show the CREATE statement", err)
	}
	_, _, err = l.Inspect(ctx, "n")
	wantErr(t, err, dialects.ErrNoTable)
	_, err = l.List(ctx)
	wantErr(t, err, dialects.ErrNoTable)
	_, err = l.Expire(ctx, "n")
	wantErr(t, err, dialects.ErrNoTable)

	// Nothing was created on the way, and a failed prepare is not cached:
	// once the table exists the same Locker works.
	var n int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master WHERE name = 'shedlock'").Scan(&n); err != nil || n != 0 {
		t.Fatalf("table count = %d, %v; want 0", n, err)
	}
	if err := l.CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	lease := mustAcquire(t, l, "n", dialects.Options{})
	if err := lease.Release(ctx); err != nil {
		t.Fatal(err)
	}

	// Dropping the table brings the error back.
	if err := l.DropTable(ctx); err != nil {
		t.Fatal(err)
	}
	_, err = l.Acquire(ctx, "n", dialects.Options{})
	wantErr(t, err, dialects.ErrNoTable)
}

// TestLongNamesAreMapped: the native table stores a name longer than its
// column as MapName(name, limit). (Preset tables refuse it instead:
// TestPresetNamesFollowTheCatalogWidth.)
func TestLongNamesAreMapped(t *testing.T) {
	for _, tc := range []struct {
		preset string
		limit  int
	}{
		{dialects.PresetSchedlock, 1024},
	} {
		t.Run(tc.preset, func(t *testing.T) {
			l := newLocker(t, dialects.Table{Preset: tc.preset})
			ctx := ctxT(t)
			fits := strings.Repeat("é", tc.limit)
			prefix := strings.Repeat("ñ", tc.limit)
			long1, long2 := prefix+"-one", prefix+"-two"

			for _, name := range []string{fits, long1, long2} {
				mustAcquire(t, l, name, dialects.Options{Owner: "o"})
			}
			if got := l.StoredName(fits); got != fits {
				t.Fatalf("a name of %d characters was mapped to %q", tc.limit, got)
			}
			rows, err := l.List(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != 3 {
				t.Fatalf("rows = %d, want 3 distinct locks", len(rows))
			}
			for _, r := range rows {
				if n := utf8.RuneCountInString(r.Name); n > tc.limit {
					t.Fatalf("stored name has %d characters, limit %d", n, tc.limit)
				}
			}
			for _, name := range []string{long1, long2} {
				stored := l.StoredName(name)
				if stored != dialects.MapName(name, tc.limit) || !regexp.MustCompile(`#[0-9a-f]{16}$`).MatchString(stored) {
					t.Fatalf("stored name %q is not MapName(name, %d)", stored, tc.limit)
				}
				row := mustInspect(t, l, name)
				if row.Name != stored || row.Owner != "o" {
					t.Fatalf("inspect by long name = %+v", row)
				}
				// The stored name, as listings show it, addresses the same lock.
				_, err := l.Acquire(ctx, stored, dialects.Options{})
				wantErr(t, err, dialects.ErrHeld)
			}
		})
	}
}

func TestPresetsWithoutTokenColumn(t *testing.T) {
	for _, preset := range []string{dialects.PresetShedlock, dialects.PresetSysSchedLock} {
		t.Run(preset, func(t *testing.T) {
			l := newLocker(t, dialects.Table{Preset: preset})
			ctx := ctxT(t)
			a := mustAcquire(t, l, "job", dialects.Options{Owner: "a"})
			if tok, ok := a.Token(); ok || tok != 0 {
				t.Fatalf("Token = %d, %v; want 0, false", tok, ok)
			}
			row := mustInspect(t, l, "job")
			if row.HasToken || row.Token != 0 || row.Owner != "a" {
				t.Fatalf("row = %+v", row)
			}
			_, err := l.Acquire(ctx, "job", dialects.Options{Owner: "b"})
			wantErr(t, err, dialects.ErrHeld)
			if err := a.Refresh(ctx); err != nil {
				t.Fatal(err)
			}
			h, _ := l.Handle("job", "b", 0, dialects.Options{})
			wantErr(t, h.Release(ctx), dialects.ErrNotOwner)
			if err := a.Release(ctx); err != nil {
				t.Fatal(err)
			}
			b := mustAcquire(t, l, "job", dialects.Options{Owner: "b"})
			if _, err := l.Expire(ctx, "job"); err != nil {
				t.Fatal(err)
			}
			c := mustAcquire(t, l, "job", dialects.Options{Owner: "c"})
			err = b.Refresh(ctx)
			wantErr(t, err, dialects.ErrLeaseLost)
			if !strings.Contains(err.Error(), "taken over by c") {
				t.Fatalf("error = %v", err)
			}
			_ = c.Release(ctx)
		})
	}
}

func TestListAndExpire(t *testing.T) {
	l := newLocker(t, dialects.Table{})
	ctx := ctxT(t)
	rows, err := l.List(ctx)
	if err != nil || rows == nil || len(rows) != 0 {
		t.Fatalf("empty list = %#v, %v; want an empty non-nil slice", rows, err)
	}
	for _, n := range []string{"b", "c", "a"} {
		mustAcquire(t, l, n, dialects.Options{Owner: "owner-" + n, AtMost: time.Hour})
	}
	ok, err := l.Expire(ctx, "c")
	if err != nil || !ok {
		t.Fatalf("expire live = %v, %v", ok, err)
	}
	ok, err = l.Expire(ctx, "c")
	if err != nil || ok {
		t.Fatalf("expire expired = %v, %v; want false", ok, err)
	}
	ok, err = l.Expire(ctx, "none")
	if err != nil || ok {
		t.Fatalf("expire missing = %v, %v; want false", ok, err)
	}
	rows, err = l.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range rows {
		names = append(names, r.Name)
		if r.Owner != "owner-"+r.Name || r.Token != 1 || !r.HasToken {
			t.Errorf("row %+v", r)
		}
		if r.DBNow.IsZero() || r.DBNow.Location() != time.UTC || r.LockedAt.After(r.DBNow) {
			t.Errorf("row times %+v", r)
		}
		if wantExpired := r.Name == "c"; r.Expired() != wantExpired {
			t.Errorf("row %s expired = %v", r.Name, r.Expired())
		}
	}
	if strings.Join(names, ",") != "a,b,c" {
		t.Fatalf("list order = %v", names)
	}
	if _, found, err := l.Inspect(ctx, "none"); err != nil || found {
		t.Fatalf("inspect missing = %v, %v", found, err)
	}
}

func TestSchemaQualifiedTable(t *testing.T) {
	l := newLocker(t, dialects.Table{Name: "main.job_locks"})
	ctx := ctxT(t)
	a := mustAcquire(t, l, "q", dialects.Options{})
	if err := a.Release(ctx); err != nil {
		t.Fatal(err)
	}
	b := mustAcquire(t, l, "q", dialects.Options{})
	if tok, _ := b.Token(); tok != 2 {
		t.Fatalf("token = %d, want 2 (upsert takeover on a qualified table)", tok)
	}
}

// rowsAffectedBuilder is the SQLite builder without RETURNING, so the
// engine's ResultRowsAffected path runs against a real database.
type rowsAffectedBuilder struct{ sqlite.Builder }

func stripReturning(st locktable.Stmt) locktable.Stmt {
	if i := strings.LastIndex(st.SQL, "\nRETURNING "); i >= 0 {
		st.SQL = st.SQL[:i]
	}
	st.Result = locktable.ResultRowsAffected
	return st
}

func (b rowsAffectedBuilder) Acquire(s dialects.Schema) locktable.Stmt {
	return stripReturning(b.Builder.Acquire(s))
}
func (b rowsAffectedBuilder) Refresh(s dialects.Schema) locktable.Stmt {
	return stripReturning(b.Builder.Refresh(s))
}
func (b rowsAffectedBuilder) Release(s dialects.Schema) locktable.Stmt {
	return stripReturning(b.Builder.Release(s))
}

func TestRowsAffectedResult(t *testing.T) {
	l := newLockerWith(t, openDB(t), rowsAffectedBuilder{}, dialects.Table{})
	ctx := ctxT(t)
	if strings.Contains(l.Statements()["acquire"], "RETURNING") {
		t.Fatal("builder still returns rows")
	}
	for want := int64(1); want <= 3; want++ {
		a := mustAcquire(t, l, "ra", dialects.Options{Owner: "a"})
		if tok, ok := a.Token(); !ok || tok != want {
			t.Fatalf("token read back = %d, %v; want %d", tok, ok, want)
		}
		_, err := l.Acquire(ctx, "ra", dialects.Options{Owner: "b"})
		wantErr(t, err, dialects.ErrHeld)
		if err := a.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		if err := a.Release(ctx); err != nil {
			t.Fatal(err)
		}
		wantErr(t, a.Release(ctx), dialects.ErrLeaseLost)
	}
}
