package postgres

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/locktable/locktabletest"
)

// articleTable creates a sys_sched_lock table with the DDL of the published
// home-grown design (lock_name VARCHAR(128) as primary key), under a
// unique name, and drops it after the test.
func articleTable(t *testing.T, width int) string {
	t.Helper()
	db := liveDB(t)
	table := unique("sys_sched_lock_")
	ddl := "CREATE TABLE " + table + " (lock_name VARCHAR(" + strconv.Itoa(width) + ") NOT NULL PRIMARY KEY, lock_owner VARCHAR(255) NOT NULL, " +
		"acquire_time TIMESTAMP(3) NOT NULL, expire_time TIMESTAMP(3) NOT NULL)"
	if _, err := db.ExecContext(testCtx(t), ddl); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, _ = db.ExecContext(ctx, "DROP TABLE IF EXISTS "+table)
	})
	return table
}

// TestArticleInteropLive: schedlock's sys_sched_lock preset and an
// application that locks the table by INSERT and unlocks by owner-checked
// DELETE share one table without two holders and without wedging each
// other (locktabletest.CheckArticleInterop), on the design's own DDL.
func TestArticleInteropLive(t *testing.T) {
	db := liveDB(t)
	table := articleTable(t, 128)
	d, err := New(testCtx(t), db, nil)
	if err != nil {
		t.Fatal(err)
	}
	tl, err := d.TableLocker(dialects.Table{Preset: dialects.PresetSysSchedLock, Name: table})
	if err != nil {
		t.Fatal(err)
	}
	a := locktabletest.ArticleSQL(table, true, "%s::timestamp")
	a.IsDuplicate = func(err error) bool { return hasCode(err, codeUniqueViolation) }
	locktabletest.CheckArticleInterop(t, db, tl, a, table, 128)
}
