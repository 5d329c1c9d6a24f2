package sqlkit_test

import (
	"context"
	"database/sql/driver"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/sqlkit"
	"github.com/schedlock/schedlock/internal/fakesql"
)

// txRowServer plays a server whose row locks last until the holding
// session ends, and which sees no BEGIN or ROLLBACK statement: what
// ProbeRowLocks with BeginTx meets on a driver whose transactions are a connection
// attribute. It records the statements and session ends in order.
type txRowServer struct {
	createErr error // what CREATE returns
	skipErr   error // what SKIP LOCKED returns; nil: it skips

	mu     sync.Mutex
	table  bool
	holder int64 // session holding the row; 0 none
	events []string
}

func (h *txRowServer) Handle(s *fakesql.Session, query string, _ []driver.NamedValue) (fakesql.Response, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	verb, _, _ := strings.Cut(query, " ")
	h.events = append(h.events, verb)
	row := fakesql.Response{Columns: []string{"id"}, Rows: [][]any{{int64(1)}}}
	lockedByOther := h.holder != 0 && h.holder != s.ID
	switch verb {
	case "CREATE":
		if h.createErr != nil {
			return fakesql.Response{}, h.createErr
		}
		h.table = true
	case "DROP":
		if lockedByOther {
			return fakesql.Response{}, errors.New("DROP TABLE would wait for the holder's row lock")
		}
		h.table = false
	case "LOCK":
		h.holder = s.ID
		return row, nil
	case "SKIP":
		if h.skipErr != nil {
			return fakesql.Response{}, h.skipErr
		}
		if lockedByOther {
			return fakesql.Response{Columns: []string{"id"}}, nil
		}
		return row, nil
	case "NOWAIT":
		if lockedByOther {
			return fakesql.Response{}, errRefused
		}
		return row, nil
	}
	return fakesql.Response{}, nil
}

func (h *txRowServer) Close(s *fakesql.Session) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.holder == s.ID {
		h.holder = 0
		h.events = append(h.events, "END-HOLDER")
	}
}

func TestProbeRowLocksBeginTx(t *testing.T) {
	for _, tc := range []struct {
		name     string
		skipErr  error
		wantSkip dialects.CapabilityStatus
	}{
		{"both work", nil, dialects.StatusYes},
		{"SKIP LOCKED unknown to the parser", errSyntax, dialects.StatusNo},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &txRowServer{skipErr: tc.skipErr}
			db, _ := fakesql.Open(h)
			defer db.Close()
			skip, nowait, err := sqlkit.ProbeRowLocks(context.Background(), db, txProbe())
			if err != nil {
				t.Fatal(err)
			}
			if skip.Status != tc.wantSkip || nowait.Status != dialects.StatusYes || !strings.Contains(nowait.Detail, "refused") {
				t.Errorf("SKIP LOCKED %+v, NOWAIT %+v; want %s and a proved NOWAIT", skip, nowait, tc.wantSkip)
			}
			h.mu.Lock()
			defer h.mu.Unlock()
			if h.table || h.holder != 0 {
				t.Errorf("left behind: table %v, row held by session %d", h.table, h.holder)
			}
			// The holder's session ends before DROP TABLE; no BEGIN or
			// ROLLBACK statement is sent: the driver's transaction is used.
			if got, want := strings.Join(h.events, ","), "CREATE,INSERT,LOCK,SKIP,NOWAIT,END-HOLDER,DROP"; got != want {
				t.Errorf("events %s, want %s", got, want)
			}
		})
	}
}

func TestProbeRowLocksBeginTxCreateRefused(t *testing.T) {
	h := &txRowServer{createErr: errors.New("no privilege to create a table")}
	db, _ := fakesql.Open(h)
	defer db.Close()
	_, _, err := sqlkit.ProbeRowLocks(context.Background(), db, txProbe())
	if err == nil || !strings.Contains(err.Error(), "no privilege") {
		t.Fatalf("err = %v, want the refusal", err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if got := strings.Join(h.events, ","); got != "CREATE" {
		t.Errorf("statements after a refused CREATE: %s", got)
	}
}

// txProbe is probeStatements with the holder's transaction begun by
// (*sql.Conn).BeginTx.
func txProbe() sqlkit.RowLockProbe {
	p := probeStatements
	p.BeginTx = true
	return p
}

// ProveRowLocks keeps the version's facts where no probe may run (read
// only, no CREATE privilege: nothing is sent) or the probe could not run
// (its error named on one line), and takes the probe's answers otherwise.
func TestProveRowLocks(t *testing.T) {
	facts := dialects.Capabilities{
		SkipLocked: dialects.Capability{Status: dialects.StatusYes, Supported: true, Detail: "by version: 8.0"},
		NoWait:     dialects.Capability{Status: dialects.StatusYes, Supported: true, Detail: "by version: 8.0"},
	}
	for _, tc := range []struct {
		name                string
		readOnly, canCreate bool
		createErr           error
		wantDetail          string // SkipLocked's detail
		wantEvents          string
	}{
		{"read only", true, true, nil, "by version: 8.0" + dialects.NotProbedReadOnly, ""},
		{"cannot create", false, false, nil, "by version: 8.0 (not probed: cannot create the probe table)", ""},
		{"probe could not run", false, true, errors.New("no privilege\n  to create a table"), "by version: 8.0 (probe: ", "CREATE"},
		{"probed", false, true, nil, "", "CREATE,INSERT,LOCK,SKIP,NOWAIT,END-HOLDER,DROP"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &txRowServer{createErr: tc.createErr}
			db, _ := fakesql.Open(h)
			defer db.Close()
			caps := facts
			if err := sqlkit.ProveRowLocks(context.Background(), db, &caps, tc.readOnly, tc.canCreate, txProbe(), nil); err != nil {
				t.Fatal(err)
			}
			switch {
			case tc.wantDetail == "":
				if strings.HasPrefix(caps.SkipLocked.Detail, "by version") || !strings.Contains(caps.NoWait.Detail, "refused") {
					t.Errorf("SKIP LOCKED %+v, NOWAIT %+v: want the probe's answers", caps.SkipLocked, caps.NoWait)
				}
			case tc.createErr != nil:
				if d := caps.SkipLocked.Detail; !strings.HasPrefix(d, tc.wantDetail) || !strings.Contains(d, "no privilege to create a table") || strings.Contains(d, "\n") {
					t.Errorf("detail %q: want the facts and the error on one line", d)
				}
			case caps.SkipLocked.Detail != tc.wantDetail || caps.NoWait.Detail != tc.wantDetail:
				t.Errorf("details %q, %q; want %q", caps.SkipLocked.Detail, caps.NoWait.Detail, tc.wantDetail)
			}
			h.mu.Lock()
			defer h.mu.Unlock()
			if got := strings.Join(h.events, ","); got != tc.wantEvents {
				t.Errorf("statements %q, want %q", got, tc.wantEvents)
			}
		})
	}
}
