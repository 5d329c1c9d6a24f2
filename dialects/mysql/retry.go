package mysql

import (
	"errors"

	"github.com/go-sql-driver/mysql"

	"github.com/schedlock/schedlock/dialects/locktable"
)

// errLockDeadlock is ER_LOCK_DEADLOCK: InnoDB chose the statement's
// transaction as a deadlock victim and rolled it back.
const errLockDeadlock = 1213

var _ locktable.Retrier = (*Builder)(nil)

// IsRetryable reports error 1213, a deadlock victim (locktable.Retrier):
// every lease-table statement runs alone in autocommit, so a rolled-back
// one changed nothing and may be sent again. InnoDB picks one when the
// acquire's INSERT … ON DUPLICATE KEY UPDATE meets, on the same key, a
// concurrent INSERT and a DELETE, as it does on the sys_sched_lock preset,
// whose releases delete the row and whose other applications insert it.
func (b *Builder) IsRetryable(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && me.Number == errLockDeadlock
}
