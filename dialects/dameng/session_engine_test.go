package dameng

import (
	"testing"

	"github.com/schedlock/schedlock/dialects/internal/dbmslock/dbmslocktest"
	"github.com/schedlock/schedlock/dialects/internal/oralike/oraliketest"
	"github.com/schedlock/schedlock/dialects/sqlkit"
)

// TestSessionEngine runs the DBMS_LOCK engine suite (server-side waits,
// statements prepared once per lock connection) over the Dameng simulator.
func TestSessionEngine(t *testing.T) {
	dbmslocktest.Run(t, dbmslocktest.Dialect{
		Name:   Name,
		Title:  "Dameng",
		Ops:    func() sqlkit.SessionOps { return &SessionOps{} },
		Blocks: session.Blocks,
		NewSim: func(t *testing.T) dbmslocktest.Sim {
			sim := newSim(t, configWithDBMSLock())
			return oraliketest.EngineSim(sim.Server, sim.open)
		},
	})
}
