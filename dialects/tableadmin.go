package dialects

import "context"

// TableDropper is implemented by table lockers that can drop their table;
// selfcheck uses it to leave nothing behind.
type TableDropper interface {
	// DropTable drops the lock table if it exists.
	DropTable(ctx context.Context) error
}
