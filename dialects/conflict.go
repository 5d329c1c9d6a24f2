package dialects

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
)

// A registration conflict: two linked packages register one backend name,
// or claim one URL scheme. Register keeps the first entry and records the
// second here instead of panicking in init, where no program could
// explain or recover from it; ForScheme then refuses every scheme the
// conflict touches with one line that names both packages.
type conflict struct {
	// scheme is the scheme both claim; "" when both register one name.
	scheme            string
	kept, dropped     *Dialect
	keptBy, droppedBy string // import paths of the registering packages
}

var (
	// conflicts are the refused registrations, guarded by registryMu.
	conflicts []conflict
	// registeredBy maps a registered name to the import path of the
	// package that registered it, guarded by registryMu.
	registeredBy = map[string]string{}
)

// callerPackage returns the import path of the package whose code called
// Register ("github.com/schedlock/schedlock/dialects/postgres"), or "" when
// the stack does not say.
func callerPackage() string {
	pc, _, _, ok := runtime.Caller(2) // 0: callerPackage, 1: Register, 2: its caller
	if !ok {
		return ""
	}
	fn := runtime.FuncForPC(pc)
	if fn == nil {
		return ""
	}
	name := fn.Name() // "example.com/x/y.init.0", "example.com/x/y.(*T).m"
	slash := strings.LastIndex(name, "/")
	if dot := strings.Index(name[slash+1:], "."); dot >= 0 {
		return name[:slash+1+dot]
	}
	return name
}

// recordConflictLocked records that d, registered by the package by,
// was refused because kept already has its name (scheme "") or claims
// scheme. registryMu is held.
func recordConflictLocked(d, kept *Dialect, scheme, by string) {
	conflicts = append(conflicts, conflict{scheme: scheme, kept: kept, dropped: d, keptBy: registeredBy[kept.Name], droppedBy: by})
}

// conflictLocked returns the error of a registration conflict that touches
// scheme — the scheme both entries claim, any scheme of the refused entry,
// or any scheme of an entry whose name was registered twice — or nil.
// registryMu is held.
func conflictLocked(scheme string) error {
	for _, c := range conflicts {
		claimed := slices.ContainsFunc(c.dropped.Schemes, func(s Scheme) bool { return s.Name == scheme })
		if c.scheme == "" && !claimed {
			owner := forSchemeLocked(scheme)
			claimed = owner != nil && owner.Name == c.kept.Name
		}
		if scheme == c.scheme || claimed {
			return c.err()
		}
	}
	return nil
}

// err says which two packages conflict and what to do.
func (c conflict) err() error {
	kept, dropped := describeRegistrant(c.kept.Name, c.keptBy), describeRegistrant(c.dropped.Name, c.droppedBy)
	if c.scheme == "" {
		return fmt.Errorf("two linked packages register the backend %q, %s and %s: import only one of them", c.kept.Name, c.keptBy, c.droppedBy)
	}
	return fmt.Errorf("two linked backends claim the scheme %q, %s and %s: import only one of them", c.scheme+"://", kept, dropped)
}

// describeRegistrant says "postgres (github.com/…/dialects/postgres)".
func describeRegistrant(name, pkg string) string {
	if pkg == "" {
		return name
	}
	return name + " (" + pkg + ")"
}
