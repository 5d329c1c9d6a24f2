package benchkit_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/benchops"
	"github.com/schedlock/schedlock/dialects/memory"
	"github.com/schedlock/schedlock/internal/benchkit"
)

// fakeStore is a lock store that is not database/sql: the memory backend
// under another dialect name, which gives raw commands on a map of its
// own as the opened backend's benchops.StoreBaseline.
type fakeStore struct {
	*memory.Backend
	raw *fakeRaw
}

const fakeStoreName = "fakestore"

var (
	_ benchops.StoreBaseline = fakeStore{}
	_ benchops.RoundTripper  = fakeStore{}
)

func (f fakeStore) Detected() dialects.Info {
	i := f.Backend.Detected()
	i.Dialect = fakeStoreName
	return i
}

// fakeRaw is the state of fakeStore's raw commands: raw takes and
// releases on one shared map; clients counts the clients open.
type fakeRaw struct {
	mu      sync.Mutex
	held    map[string]bool
	clients int
	opened  int
}

func (f fakeStore) RoundTripSQL() string { return "PING" }

func (f fakeStore) RawStoreOps(context.Context) (benchops.StoreOps, error) {
	s := f.raw
	s.mu.Lock()
	s.clients++
	s.opened++
	s.mu.Unlock()
	return benchops.StoreOps{
		RoundTrip: func(context.Context) error { return nil },
		TryLock: func(_ context.Context, name string) (bool, error) {
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.held[name] {
				return false, nil
			}
			s.held[name] = true
			return true, nil
		},
		Unlock: func(_ context.Context, name string) error {
			s.mu.Lock()
			defer s.mu.Unlock()
			delete(s.held, name)
			return nil
		},
		Close: func() error {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.clients--
			return nil
		},
	}, nil
}

func openFakeStore(t *testing.T) fakeStore {
	t.Helper()
	b, err := memory.Open("bench-" + dialects.NewOwner())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return fakeStore{Backend: b, raw: &fakeRaw{held: map[string]bool{}}}
}

// A store's bench measures the round trip, the engine and the raw
// commands side by side, through Backend.Locker and the opened backend's
// benchops.StoreBaseline alone: nothing is registered.
func TestRunOnAStoreComparesWithItsRawCommands(t *testing.T) {
	store := openFakeStore(t)
	support := store.raw
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rep, err := benchkit.Run(ctx, store, benchkit.Plan{Cycles: true, Workers: 3, HandOver: true, Locks: 20, Budget: benchkit.Budget{Cycles: 10}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Dialect != fakeStoreName {
		t.Errorf("dialect %q", rep.Dialect)
	}
	if rep.RoundTrip == nil || rep.RoundTrip.Statement != "PING" || rep.RoundTrip.Cycles != 10 {
		t.Fatalf("round_trip %+v, want 10 PINGs", rep.RoundTrip)
	}
	if len(rep.Cycles) != 1 || rep.Cycles[0].Strategy != "table" {
		t.Fatalf("cycles %+v, want the table strategy alone (the session one noted)", rep.Cycles)
	}
	c := rep.Cycles[0]
	if c.Engine.Cycles != 10 || c.Raw == nil || c.Raw.Cycles != 10 || c.EngineToRaw == nil || c.EngineToLimit == nil {
		t.Errorf("cycles %+v: want engine and raw measured with their ratios", c)
	}
	if len(rep.Contention) != 1 || rep.Contention[0].Raw == nil || rep.Contention[0].Raw.Successes < 10 || rep.Contention[0].EngineToRaw == nil {
		t.Errorf("contention %+v, want the raw commands beside the engine", rep.Contention)
	}
	if len(rep.HandOver) != 1 || rep.HandOver[0].HandOvers != 10 {
		t.Errorf("hand_over %+v", rep.HandOver)
	}
	h := rep.HeldLocks
	if h == nil || h.Strategy != "table" || h.Acquired != 20 || h.ConnectionsSource != benchkit.SourceNone || h.Error != nil {
		t.Errorf("held_locks %+v, want 20 leases held, connections not counted", h)
	}
	if len(rep.Notes) != 1 {
		t.Errorf("notes %q, want the skipped session strategy", rep.Notes)
	}
	if support.clients != 0 || support.opened < 1+3 {
		t.Errorf("%d raw clients left open of %d opened", support.clients, support.opened)
	}
	if len(support.held) != 0 {
		t.Errorf("raw locks left held: %v", support.held)
	}
}

// A store without bench support is measured through its lockers alone,
// and the report says there is nothing raw to compare with.
func TestRunOnAStoreWithoutSupport(t *testing.T) {
	b, err := memory.Open("bench-" + dialects.NewOwner())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	rep, err := benchkit.Run(context.Background(), b, benchkit.Plan{Cycles: true, Budget: benchkit.Budget{Cycles: 5}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.RoundTrip != nil || len(rep.Cycles) != 1 || rep.Cycles[0].Raw != nil || rep.Cycles[0].Engine.Cycles != 5 || rep.Cycles[0].EngineToLimit != nil {
		t.Errorf("report %+v %+v: want the engine alone", rep.RoundTrip, rep.Cycles)
	}
	if len(rep.Notes) != 2 {
		t.Errorf("notes %q: want the skipped session strategy and no raw commands", rep.Notes)
	}
}
