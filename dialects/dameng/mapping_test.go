package dameng

import (
	"database/sql"
	"testing"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/internal/oralike/oraliketest"
	"github.com/schedlock/schedlock/dialects/locktable"
	"github.com/schedlock/schedlock/dialects/sqlkit"
)

// TestMappings proves on the Dameng simulator that the conformance checks
// catch a wrong reading of the server's answers (oraliketest.RunMappings):
// a DBMS_LOCK return code mapped wrongly, a REQUEST that grants an owned
// lock again, and -6602 from the MERGE read as an error rather than as
// the lock held by the racer.
func TestMappings(t *testing.T) {
	oraliketest.RunMappings(t, oraliketest.Mappings{
		Name:    Name,
		Session: session,
		Admin:   func() oraliketest.SessionAdmin { return &SessionOps{} },
		Open: func(t *testing.T, c oraliketest.Config, session func(*sql.DB) dialects.Locker, table func(*sql.DB, dialects.Table) dialects.TableLocker) (*oraliketest.Server, *sqlkit.DB) {
			cfg := configWithDBMSLock()
			cfg.Config = c
			return dbWith(t, cfg, session, table)
		},
		Builder:        &Builder{},
		TableLocker:    func(l *locktable.Locker) dialects.TableLocker { return &TableLocker{Locker: l} },
		IsDuplicateKey: IsDuplicateKey,
		DuplicateKey:   "-6602",
	})
}

// dbWith returns the simulated database with the dialect's lockers
// replaced by session (for the session strategy) and table (for the table
// strategy); nil keeps the real one.
func dbWith(t *testing.T, cfg simConfig, session func(*sql.DB) dialects.Locker, table func(*sql.DB, dialects.Table) dialects.TableLocker) (*oraliketest.Server, *sqlkit.DB) {
	t.Helper()
	sim, real := openSim(t, cfg)
	d := *real.Dialect
	if session != nil {
		d.NewSessionLocker = func(db *sql.DB, _ dialects.Info) (dialects.Locker, error) { return session(db), nil }
	}
	if table != nil {
		d.NewTableLocker = func(db *sql.DB, _ dialects.Info, tb dialects.Table) (dialects.TableLocker, error) {
			return table(db, tb), nil
		}
	}
	return sim.Server, &sqlkit.DB{SQL: real.SQL, Dialect: &d, Info: real.Info}
}
