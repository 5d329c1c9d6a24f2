package dialects

import (
	"fmt"
	"time"
)

// CapabilityStatus is the answer a probe gave for one capability.
type CapabilityStatus string

// The capability statuses.
const (
	// StatusYes: the database has it (proved by a probe, or known from
	// the product and version when no probe could run; Detail says which).
	StatusYes CapabilityStatus = "yes"
	// StatusNo: the database lacks it, or this user cannot use it.
	StatusNo CapabilityStatus = "no"
	// StatusStub: the feature answers but does not work, such as a lock
	// function that grants the same lock to two sessions.
	StatusStub CapabilityStatus = "stub"
	// StatusUnknown: the probe failed without an answer (Detail says why).
	StatusUnknown CapabilityStatus = "unknown"
)

// Capability is one thing a database can or cannot do for schedlock.
// Supported is true exactly when Status is StatusYes.
type Capability struct {
	Supported bool             `json:"supported"`
	Status    CapabilityStatus `json:"status"`
	// Detail says what was found and how: "proved: …" for a live probe,
	// "by version: …" for a known fact. For isolation it is the level.
	Detail string `json:"detail"`
	// Remedy says how to get the capability (a GRANT, a setting, another
	// strategy); empty when there is nothing to do.
	Remedy string `json:"remedy"`
	// Fix is the remedy as data when it is one (see Fixed); Remedy then
	// begins with its words.
	Fix *Remedy `json:"-"`
}

// Fixed returns c with fix as its Fix and its Remedy fix's words followed
// by more (": the lease table is a real lock", ", or …").
func (c Capability) Fixed(fix Remedy, more string) Capability {
	c.Fix = &fix
	c.Remedy = fix.String() + more
	return c
}

// CapYes returns a supported capability.
func CapYes(detail string) Capability {
	return Capability{Supported: true, Status: StatusYes, Detail: detail}
}

// CapNo returns an unsupported capability and how to get it.
func CapNo(detail, remedy string) Capability {
	return Capability{Status: StatusNo, Detail: detail, Remedy: remedy}
}

// CapStub returns a capability that answers but does not work.
func CapStub(detail, remedy string) Capability {
	return Capability{Status: StatusStub, Detail: detail, Remedy: remedy}
}

// CapUnknown returns a capability whose probe gave no answer.
func CapUnknown(detail, remedy string) Capability {
	return Capability{Status: StatusUnknown, Detail: detail, Remedy: remedy}
}

// ClaimStrategy names how workers claim task rows without taking the same
// one twice.
type ClaimStrategy string

// The claim strategies.
const (
	// ClaimSkipLocked: SELECT … FOR UPDATE SKIP LOCKED in a transaction.
	ClaimSkipLocked ClaimStrategy = "skip-locked"
	// ClaimReadPast: SQL Server's WITH (UPDLOCK, READPAST, ROWLOCK).
	ClaimReadPast ClaimStrategy = "readpast"
	// ClaimOptimistic: UPDATE … WHERE id = ? AND version = ?, then check
	// the rows affected.
	ClaimOptimistic ClaimStrategy = "optimistic"
)

// MissingPrivilege is a privilege the database user lacks, what needs it,
// and the statement that grants it.
type MissingPrivilege struct {
	Privilege string `json:"privilege"`
	NeededFor string `json:"needed_for"`
	// Grant is the statement that fixes it; empty when no GRANT does (for
	// example a read-only SQLite file).
	Grant string `json:"grant"`
}

// Clock is one reading of the server clock against the host clock.
type Clock struct {
	// Skew is the server clock minus the host clock at the midpoint of
	// the round trip; positive when the server is ahead.
	Skew time.Duration `json:"-"`
	// RoundTrip is the duration of the query that read the server clock;
	// Skew is uncertain by half of it.
	RoundTrip time.Duration `json:"-"`
	// Server is the server's time, in UTC.
	Server time.Time `json:"server"`
	// Measured is true when the reading succeeded.
	Measured bool `json:"measured"`
	// Detail says why the clock could not be read; empty when Measured.
	Detail string `json:"detail"`
}

// Recommendation is the strategy Probe advises and why.
type Recommendation struct {
	LockStrategy Strategy `json:"lock_strategy"`
	LockReason   string   `json:"lock_reason"`
	// ClaimStrategy is empty where there are no task rows to claim (the
	// stores); ClaimReason then says so.
	ClaimStrategy ClaimStrategy `json:"claim_strategy"`
	ClaimReason   string        `json:"claim_reason"`
}

// Reason says why both strategies were chosen, in one text.
func (r Recommendation) Reason() string {
	if r.ClaimStrategy == "" {
		return fmt.Sprintf("lock strategy %s: %s; no claims: %s", r.LockStrategy, r.LockReason, r.ClaimReason)
	}
	return fmt.Sprintf("lock strategy %s: %s; claim strategy %s: %s", r.LockStrategy, r.LockReason, r.ClaimStrategy, r.ClaimReason)
}

// Capabilities is what Probe proved or knows about a database.
type Capabilities struct {
	// SessionLocks: named session locks really exclude a second session
	// (a two-connection probe through the dialect's SessionOps).
	SessionLocks Capability `json:"session_locks"`
	// SkipLocked: SELECT … FOR UPDATE SKIP LOCKED skips a locked row.
	SkipLocked Capability `json:"skip_locked"`
	// NoWait: SELECT … FOR UPDATE NOWAIT fails at once on a locked row.
	NoWait Capability `json:"nowait"`
	// Isolation: the session's default isolation level, in Detail
	// ("read committed", "repeatable read", "serializable", …).
	Isolation Capability `json:"isolation"`
	// LockListing: held session locks can be listed with their holder.
	LockListing Capability `json:"lock_listing"`
	// KillSessions: this user may terminate other users' sessions (the
	// only way to free a session lock its holder does not release).
	KillSessions Capability `json:"kill_sessions"`
	// Clock is the server clock against the host clock.
	Clock Clock `json:"clock"`
	// MissingPrivileges lists what this user lacks; never nil after
	// DB.Probe.
	MissingPrivileges []MissingPrivilege `json:"missing_privileges"`
	// Recommended is filled by DB.Probe from the rest.
	Recommended Recommendation `json:"recommended"`
	// Risks are what the deployment cannot promise (lock stores); nil
	// where the backend reports none.
	Risks []Risk `json:"risks"`
}

// ProbeOptions tune DB.Probe.
type ProbeOptions struct {
	// ReadOnly skips every probe that creates anything (the SKIP LOCKED and
	// NOWAIT probe table, a table-creation test); those capabilities are
	// then judged by product and version. Session locks are still probed:
	// taking and releasing a lock writes nothing.
	ReadOnly bool
}

// NeededForLocks is what a lock store's missing privilege is needed for:
// every lock operation reads and writes the same keys or nodes.
const NeededForLocks = "taking, refreshing, releasing and listing locks"

// ListingNeeds is the lock_listing capability of a store whose user lacks
// p, which reading the locks needs: not proved, with p's fix.
func ListingNeeds(p MissingPrivilege) Capability {
	return CapNo("listing reads the locks, which needs "+p.Privilege, p.Grant)
}
