package dameng

import (
	"database/sql"
	"regexp"
	"testing"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/internal/oralike/oraliketest"
	"github.com/schedlock/schedlock/dialects/locktable"
)

// openSim starts a simulated server with cfg (its Tables defaulting to one
// table per preset) and opens it with New.
func openSim(t *testing.T, cfg simConfig) (*dmSim, *Backend) {
	t.Helper()
	if cfg.Tables == nil {
		cfg.Tables = presetTables()
	}
	sim := newSim(t, cfg)
	sqlDB, _ := sim.Open(t)
	return sim, oraliketest.Detect(t, sqlDB, New)
}

// suite is this dialect as the shared simulator tests run it.
func suite() oraliketest.Suite {
	return oraliketest.Suite{
		Name:    Name,
		Title:   "Dameng",
		Session: session,
		Ops:     func() oraliketest.SessionOps { return &SessionOps{} },
		Open: func(t *testing.T, c oraliketest.Config, session func(*sql.DB) dialects.Locker, table func(*sql.DB, dialects.Table) dialects.TableLocker) (*oraliketest.Server, oraliketest.Backend) {
			cfg := configDM8()
			cfg.Config = c
			sim, db := openSim(t, cfg)
			return sim.Server, oraliketest.WithLockers(db, session, table)
		},
		Builder:        &Builder{},
		TableLocker:    func(l *locktable.Locker) dialects.TableLocker { return &TableLocker{Locker: l} },
		IsDuplicateKey: IsDuplicateKey,
		DuplicateKey:   "-6602",
		SessionID:      regexp.MustCompile(`^[0-9]+$`),
	}
}

// TestSimulated runs the shared simulator tests (oraliketest.RunSimulated)
// on the Dameng simulator: the lock contract for both strategies, a writer
// time zone, the row-deleting preset, pausing and the session operations.
func TestSimulated(t *testing.T) { oraliketest.RunSimulated(t, suite()) }

// TestMappings proves on the Dameng simulator that the conformance checks
// catch a wrong reading of the server's answers (oraliketest.RunMappings):
// a DBMS_LOCK return code mapped wrongly, a REQUEST that grants an owned
// lock again, and -6602 from the MERGE read as an error rather than as
// the lock held by the racer.
func TestMappings(t *testing.T) { oraliketest.RunMappings(t, suite()) }
