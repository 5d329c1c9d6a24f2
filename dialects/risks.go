package dialects

import "slices"

// Risk is a property of a deployment under which the lock contract can
// break although every check passes: a store that evicts keys, forgets
// its data on a restart, or replicates asynchronously. Probes report them
// (Capabilities.Risks) with the reason and what to do instead.
type Risk struct {
	// ID names the risk: "eviction", "no-persistence", "async-replication", …
	ID string `json:"id"`
	// Detail says what was found and what can go wrong.
	Detail string `json:"detail"`
	// Remedy says what to do instead.
	Remedy string `json:"remedy"`
}

// The IDs of the risks under which a store can hand a lock to a second
// holder while the first still runs: it loses or evicts the lock's key,
// or fails over to a replica that never received it. Backends report
// them under these IDs; `schedlock run` and lock.Open warn of them, and
// selfcheck fails on them unless each is accepted by name.
const (
	// RiskEviction: the store evicts keys when full (Redis maxmemory
	// with an evicting policy); the Redis backend refuses to lock there.
	RiskEviction = "eviction"
	// RiskEvictionPolicy: an evicting policy without a memory limit yet;
	// one setting away from eviction.
	RiskEvictionPolicy = "eviction-policy"
	// RiskNoPersistence: a restart forgets every lock.
	RiskNoPersistence = "no-persistence"
	// RiskRDBOnly: a crash or restart forgets the locks taken since the
	// last snapshot.
	RiskRDBOnly = "rdb-only"
	// RiskPersistenceUnknown: persistence could not be read; a restart may
	// forget the locks.
	RiskPersistenceUnknown = "persistence-unknown"
	// RiskAsyncReplication: writes reach replicas asynchronously (no
	// WAIT), so a failover can promote one that never saw a lock.
	RiskAsyncReplication = "async-replication"
	// RiskAsyncFsync: the store acknowledges writes before they reach
	// disk (NATS JetStream's default sync every 2 minutes), so losing the
	// machine can lose a lock taken since the last sync.
	RiskAsyncFsync = "async-fsync"
	// RiskNonAtomicUpdates: the server carries out a conditional update
	// as a read and a separate write (FerretDB 1.x), so two contenders
	// can both take one expired lock.
	RiskNonAtomicUpdates = "non-atomic-updates"
)

// twoHolderRisks are the IDs above, sorted.
var twoHolderRisks = []string{RiskAsyncFsync, RiskAsyncReplication, RiskEviction, RiskEvictionPolicy, RiskNoPersistence, RiskNonAtomicUpdates, RiskPersistenceUnknown, RiskRDBOnly}

// TwoHolderRiskIDs lists the IDs of the risks that can hand a lock to
// two holders (RiskEviction, …), sorted: the names selfcheck accepts.
func TwoHolderRiskIDs() []string { return slices.Clone(twoHolderRisks) }

// TwoHolders reports whether r can hand a lock to a second holder while
// the first still runs (its ID is one of TwoHolderRiskIDs). Other risks
// cost availability (a single member) or say what detection could not
// read; they never give one lock to two.
func (r Risk) TwoHolders() bool { return slices.Contains(twoHolderRisks, r.ID) }

// RiskReporter is a Backend that knows its deployment's risks from
// detection alone, without a round trip: the risks its probe reports as
// Capabilities.Risks, never nil. Lock stores implement it; SQL backends,
// whose durability is the database's own, do not.
type RiskReporter interface {
	Risks() []Risk
}

// TwoHolderRisks returns the risks of b that can hand a lock to two
// holders (Risk.TwoHolders), from detection; nil when b reports none or
// is not a RiskReporter.
func TwoHolderRisks(b Backend) []Risk {
	rr, ok := b.(RiskReporter)
	if !ok {
		return nil
	}
	var out []Risk
	for _, r := range rr.Risks() {
		if r.TwoHolders() {
			out = append(out, r)
		}
	}
	return out
}
