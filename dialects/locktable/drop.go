package locktable

import (
	"context"

	"github.com/schedlock/schedlock/dialects"
)

// Dropper is optionally implemented by a Builder whose database lacks
// DROP TABLE IF EXISTS (Oracle before 23ai, …) or needs another form.
type Dropper interface {
	// Drop drops the table of s when it exists, and succeeds when it does
	// not.
	Drop(s dialects.Schema) string
}

// dropSQL is the builder's Drop statement, or DROP TABLE IF EXISTS.
func (l *Locker) dropSQL() string {
	if d, ok := l.b.(Dropper); ok {
		return d.Drop(l.schema)
	}
	return "DROP TABLE IF EXISTS " + l.schema.Table
}

// DropTable drops the lock table if it exists (selfcheck uses it to leave
// nothing behind). It closes the Locker's prepared statements first; the
// next operation prepares them again.
func (l *Locker) DropTable(ctx context.Context) error {
	if err := l.Close(); err != nil {
		return err
	}
	_, err := l.db.ExecContext(ctx, l.dropSQL())
	return dialects.Wrap(l.b.Dialect(), "drop table", err)
}
