package dialects

import "fmt"

// LeaseOnlyLocker is Backend.Locker for a store whose locks are all
// leases: the table strategy is lease(t); the session strategy is
// ErrUnsupported, wrapped for dialect's "session locker" with the
// UseTableStrategy remedy and saying why (the backend's own sentence,
// such as "NATS has no session locks; its locks are leases (the table
// strategy)"); any other strategy is ErrInvalid.
func LeaseOnlyLocker(dialect, why string, strategy Strategy, t Table, lease func(Table) (LeaseLocker, error)) (Locker, error) {
	switch strategy {
	case StrategyTable:
		l, err := lease(t)
		if err != nil {
			return nil, err
		}
		return l, nil
	case StrategySession:
		return nil, Wrap(dialect, "session locker", WithRemedy(fmt.Errorf("%w: %s", ErrUnsupported, why), UseTableStrategy))
	}
	return nil, Invalidf("unknown strategy %q: use session or table", strategy)
}
