package mysql

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/locktable/locktabletest"
)

// TestArticleInteropLive: schedlock's sys_sched_lock preset and an
// application that locks the table by INSERT and unlocks by owner-checked
// DELETE share one table without two holders and without wedging each
// other (locktabletest.CheckArticleInterop), on the published design's
// DDL: lock_name VARCHAR(128) as primary key, the server's default utf8mb4
// collation.
func TestArticleInteropLive(t *testing.T) {
	d := openDetected(t)
	db := d.SQL
	table := uniqueName("sys_sched_lock_")
	ddl := "CREATE TABLE " + table + " (lock_name VARCHAR(128) NOT NULL, lock_owner VARCHAR(255) NOT NULL, " +
		"acquire_time DATETIME(3) NOT NULL, expire_time DATETIME(3) NOT NULL, PRIMARY KEY (lock_name)) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4"
	if _, err := db.ExecContext(testContext(t), ddl); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, _ = db.ExecContext(ctx, "DROP TABLE IF EXISTS "+table)
	})
	tl, err := d.TableLocker(dialects.Table{Preset: dialects.PresetSysSchedLock, Name: table})
	if err != nil {
		t.Fatal(err)
	}
	a := locktabletest.ArticleSQL(table, false, "")
	a.IsDuplicate = func(err error) bool {
		var me *mysql.MySQLError
		return errors.As(err, &me) && me.Number == 1062
	}
	a.IsAborted = (&Builder{}).IsRetryable
	locktabletest.CheckArticleInterop(t, db, tl, a, table, 128)
}
