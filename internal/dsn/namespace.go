package dsn

import "github.com/schedlock/schedlock/dialects"

// PlaceNamespace says where namespace ns of the locks of table t lives on
// d's backend (dialects.PlaceNamespace): in the table (ShedLock's Redis
// environment) — the table it returns, with "" left for the lock names —
// or in the lock names, t and ns unchanged. It needs no connection, so a
// refused pair is refused before anything is dialled. Errors match
// dialects.ErrInvalid.
func (d *DSN) PlaceNamespace(t dialects.Table, ns string) (dialects.Table, string, error) {
	entry, err := d.Dialect()
	if err != nil {
		entry = nil // no backend in this build: Connect says so
	}
	return dialects.PlaceNamespace(entry, t, ns)
}
