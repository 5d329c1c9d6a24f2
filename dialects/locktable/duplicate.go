package locktable

// DuplicateKeyer is optionally implemented by a Builder whose Acquire
// statement can fail with a duplicate-key error when two sessions insert
// the row of a new name at the same moment (Oracle MERGE: ORA-00001; SQL
// Server MERGE: 2627/2601; Dameng: -6602). The engine then reports the lock
// as held by the session that won the insert, never as an error.
type DuplicateKeyer interface {
	IsDuplicateKey(err error) bool
}

// isDuplicateKey reports whether err is the builder's duplicate-key error.
func (l *Locker) isDuplicateKey(err error) bool {
	dk, ok := l.b.(DuplicateKeyer)
	return ok && err != nil && dk.IsDuplicateKey(err)
}
