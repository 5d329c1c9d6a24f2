package oracle

import (
	"errors"
	"strings"
	"testing"

	"github.com/schedlock/schedlock/dialects"
)

func TestListSessionLocksSimulated(t *testing.T) {
	_, db := openSim(t, config19c())
	ctx := testCtx(t)
	empty, err := ListSessionLocks(ctx, db.SQL)
	if err != nil || empty == nil || len(empty) != 0 {
		t.Fatalf("ListSessionLocks with nothing held = %v, %v; want an empty, non-nil slice", empty, err)
	}
	_, idA := holdOne(t, db, "alpha")
	_, idB := holdOne(t, db, "beta ключ")
	got, err := ListSessionLocks(ctx, db.SQL)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("listed %d locks, want 2: %+v", len(got), got)
	}
	for i, want := range []struct{ name, id string }{{"alpha", idA}, {"beta ключ", idB}} {
		l := got[i]
		if l.Name != want.name || l.LockName != LockName(want.name) || l.SessionID != want.id {
			t.Errorf("lock %d = %+v; want %s held by %s", i, l, want.name, want.id)
		}
		if !l.Granted || l.Mode != 6 || l.LockID < 1073741824 || l.User != "APP" || l.Instance != 1 {
			t.Errorf("lock %d = %+v; want granted in mode 6 with an allocated id, user APP, instance 1", i, l)
		}
	}
}

func TestListWithoutViewGrants(t *testing.T) {
	cfg := config19c()
	cfg.NoViews = true
	cfg.User = "APP"
	_, db := openSim(t, cfg)
	_, err := ListSessionLocks(testCtx(t), db.SQL)
	var pe *dialects.PrivilegeError
	if !errors.As(err, &pe) {
		t.Fatalf("ListSessionLocks without grants: %v; want a *dialects.PrivilegeError", err)
	}
	for _, want := range []string{"GRANT SELECT ON SYS.GV_$LOCK TO APP", "SYS.GV_$SESSION", "SYS.DBMS_LOCK_ALLOCATED"} {
		if !strings.Contains(pe.Grant, want) {
			t.Errorf("Grant %q lacks %q", pe.Grant, want)
		}
	}
}
