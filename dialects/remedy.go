package dialects

import (
	"errors"
	"strings"
)

// RemedyKind names what a Remedy asks for.
type RemedyKind string

// The remedy kinds.
const (
	// RemedyUseStrategy: use another lock strategy (Remedy.Strategy).
	RemedyUseStrategy RemedyKind = "use-strategy"
	// RemedyCreateTable: create the lock table (Remedy.Table) with the
	// locker's CreateTable, or by running Remedy.Statement.
	RemedyCreateTable RemedyKind = "create-table"
	// RemedyGrant: grant the database user Remedy.Privilege with
	// Remedy.Statement.
	RemedyGrant RemedyKind = "grant"
	// RemedyKillSession: end the session that holds a session lock
	// (LockAdmin.Kill); nothing else frees it.
	RemedyKillSession RemedyKind = "kill-session"
	// RemedyRaiseLimit: raise the server limit Remedy.Limit with
	// Remedy.Statement (then restart the server when Remedy.Restart), or
	// close idle connections.
	RemedyRaiseLimit RemedyKind = "raise-limit"
)

// Remedy is what fixes a refusal, as data: the kind of action and what it
// needs. Backends attach one to their errors (see RemedyError and the
// Remedy methods of the typed errors) and to capabilities
// (Capability.Fix); a front end words it its own way. String words it for
// a program using the library; no text of this package names a command
// line flag.
type Remedy struct {
	Kind RemedyKind `json:"kind"`
	// Strategy is the strategy to use (RemedyUseStrategy).
	Strategy Strategy `json:"strategy,omitempty"`
	// Table is the lock table to create (RemedyCreateTable).
	Table string `json:"table,omitempty"`
	// Privilege is the privilege to grant (RemedyGrant).
	Privilege string `json:"privilege,omitempty"`
	// Limit is the limit to raise (RemedyRaiseLimit): "max_connections".
	Limit string `json:"limit,omitempty"`
	// Statement is the SQL that applies the fix: the CREATE TABLE, the
	// GRANT, the ALTER SYSTEM (with <n> for a value to choose); empty when
	// none does.
	Statement string `json:"statement,omitempty"`
	// Restart is true when the fix applies only after a server restart.
	Restart bool `json:"restart,omitempty"`
}

// UseTableStrategy is the remedy of a database whose session locks cannot
// be used: the lease table works everywhere.
var UseTableStrategy = Remedy{Kind: RemedyUseStrategy, Strategy: StrategyTable}

// String is the remedy in the words of the library, on one line:
// "use the table strategy (lock.StrategyTable)", "create it with
// lock.DB.CreateTable or run: CREATE TABLE …", "run: GRANT …".
func (r Remedy) String() string {
	stmt := strings.Join(strings.Fields(r.Statement), " ")
	switch r.Kind {
	case RemedyUseStrategy:
		return "use " + string(StrategyTerm(r.Strategy))
	case RemedyCreateTable:
		if stmt == "" {
			return "create it with " + string(TermCreateTable)
		}
		return "create it with " + string(TermCreateTable) + " or run: " + stmt
	case RemedyGrant:
		if stmt == "" {
			return "grant the database user " + r.Privilege
		}
		return "run: " + stmt
	case RemedyKillSession:
		return "free it by " + string(TermKillSession)
	case RemedyRaiseLimit:
		msg := "raise " + r.Limit
		if stmt != "" {
			msg += " (" + stmt
			if r.Restart {
				msg += ", then restart the server"
			}
			msg += ")"
		}
		return msg + " or close idle connections"
	}
	return string(r.Kind)
}

// Term is the library's name for something a front end may call otherwise
// (the command line names a flag or a command). Texts of this package and
// of the backends write a Term where such a name belongs, so a front end
// can put its own in its place; Terms lists them all.
type Term string

// The terms.
const (
	// TermStrategyTable is the table strategy.
	TermStrategyTable Term = "the table strategy (lock.StrategyTable)"
	// TermStrategySession is the session strategy.
	TermStrategySession Term = "the session strategy (lock.StrategySession)"
	// TermCreateTable is creating the lock table from the program.
	TermCreateTable Term = "lock.DB.CreateTable"
	// TermKillSession is ending a session lock's holder.
	TermKillSession Term = "session termination (LockAdmin.Kill)"
	// TermForceRelease is ending a table lease whoever holds it.
	TermForceRelease Term = "a forced release (LeaseLocker.Expire)"
	// TermListLocks is listing the locks.
	TermListLocks Term = "the lock listing (LockLister.ListLocks)"
	// TermFindLock is looking a lock up by its exact name.
	TermFindLock Term = "a lookup by exact name (LockLister.FindLock)"
	// TermReadOnly is a probe that creates nothing.
	TermReadOnly Term = "a read-only probe (ProbeOptions.ReadOnly)"
	// TermAllowRisk is accepting a risk of two holders by its ID, so a
	// self-check does not fail on it; the ID follows.
	TermAllowRisk Term = "checks.Config.AllowRisks"
)

// Terms lists every Term, for a front end to map each to its own words.
func Terms() []Term {
	return []Term{TermStrategyTable, TermStrategySession, TermCreateTable, TermKillSession,
		TermForceRelease, TermListLocks, TermFindLock, TermReadOnly, TermAllowRisk}
}

// StrategyTerm is the Term of strategy s.
func StrategyTerm(s Strategy) Term {
	if s == StrategySession {
		return TermStrategySession
	}
	return TermStrategyTable
}

// Remedier is implemented by errors that know their remedy: *RemedyError,
// *MissingTableError, *PrivilegeError, *ConnLimitError.
type Remedier interface {
	error
	Remedy() Remedy
}

// RemedyError is an error with the remedy that fixes it. Its text is the
// cause's, "; " and the remedy's String. It unwraps to the cause, so
// errors.Is(err, ErrUnsupported) still works.
type RemedyError struct {
	Err error
	Fix Remedy
}

func (e *RemedyError) Error() string { return e.Err.Error() + "; " + e.Fix.String() }

// Unwrap returns the cause.
func (e *RemedyError) Unwrap() error { return e.Err }

// Remedy returns Fix.
func (e *RemedyError) Remedy() Remedy { return e.Fix }

// WithRemedy returns err with fix attached as a *RemedyError; nil stays nil.
func WithRemedy(err error, fix Remedy) error {
	if err == nil {
		return nil
	}
	return &RemedyError{Err: err, Fix: fix}
}

// RemedyOf returns the outermost remedy along err's chain.
func RemedyOf(err error) (Remedy, bool) {
	var r Remedier
	if errors.As(err, &r) {
		return r.Remedy(), true
	}
	return Remedy{}, false
}

// NotProbedReadOnly ends the Detail of a capability a read-only probe
// judged by version instead of proving it.
const NotProbedReadOnly = " (not probed: " + string(TermReadOnly) + ")"
