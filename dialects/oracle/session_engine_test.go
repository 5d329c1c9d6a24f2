package oracle

import (
	"testing"

	"github.com/schedlock/schedlock/dialects/internal/dbmslock/dbmslocktest"
	"github.com/schedlock/schedlock/dialects/internal/oralike/oraliketest"
	"github.com/schedlock/schedlock/dialects/sqlkit"
)

// TestSessionEngine runs the DBMS_LOCK engine suite (server-side waits,
// statements prepared once per lock connection) over the Oracle simulator.
func TestSessionEngine(t *testing.T) {
	dbmslocktest.Run(t, dbmslocktest.Dialect{
		Name:   Name,
		Title:  "Oracle",
		Ops:    func() sqlkit.SessionOps { return &SessionOps{} },
		Blocks: session.Blocks,
		NewSim: func(t *testing.T) dbmslocktest.Sim {
			sim := newSim(t, config19c())
			return oraliketest.EngineSim(sim.Server, sim.open)
		},
	})
}
