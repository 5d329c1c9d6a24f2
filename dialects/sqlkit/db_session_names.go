package sqlkit

import "github.com/schedlock/schedlock/dialects"

// SessionNames returns the session names the DSN's options ask for,
// checked against this database (see CheckSessionNames).
func (db *DB) SessionNames() (dialects.SessionNames, error) {
	n, err := dialects.SessionNamesOf(db.options)
	if err != nil {
		return dialects.SessionNames{}, err
	}
	if err := dialects.CheckSessionNames(db.Dialect, n, &db.Info); err != nil {
		return dialects.SessionNames{}, dialects.Wrap(db.Dialect.Name, "session names", err)
	}
	return n, nil
}

// CheckLockName implements NameChecker with the SessionOps' own, if any.
func (l *SessionLocker) CheckLockName(name string) error {
	if c, ok := l.Ops.(dialects.NameChecker); ok {
		return c.CheckLockName(name)
	}
	return nil
}
