package oracle

import (
	"database/sql"
	"testing"

	"github.com/schedlock/schedlock/dialects/internal/dbmslock/dbmslocktest"
	"github.com/schedlock/schedlock/dialects/sqlkit"
	"github.com/schedlock/schedlock/internal/fakesql"
)

// TestSessionEngine runs the DBMS_LOCK engine suite (server-side waits,
// statements prepared once per lock connection) over the Oracle simulator.
func TestSessionEngine(t *testing.T) {
	dbmslocktest.Run(t, dbmslocktest.Dialect{
		Name:   Name,
		Title:  "Oracle",
		Ops:    func() sqlkit.SessionOps { return &SessionOps{} },
		Blocks: session.Blocks,
		NewSim: func(t *testing.T) dbmslocktest.Sim { return engineSim{newSim(t, config19c())} },
	})
}

// engineSim is the simulator as the engine suite drives it.
type engineSim struct{ *oraSim }

func (s engineSim) Open(t *testing.T) (*sql.DB, *fakesql.Log) { return s.open(t) }
func (s engineSim) Waits() []int64                            { return s.waits() }

func (s engineSim) AnswerWaitsWith(code int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.locks.WaitCode = &code
}
