package checks

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/internal/elide"
)

// capabilityChecks are the probes detection runs (docs/detect.md, What it
// probes) — session locks that really exclude (a stub that grants twice
// fails), SKIP LOCKED and NOWAIT on real row locks, lock listing, the
// right to terminate sessions and the privileges the strategies need —
// one result each, from one Probe per run (dialects.Prober).
func capabilityChecks() []Check {
	type capCheck struct {
		id, title string
		pick      func(dialects.Capabilities) dialects.Capability
		// absentWarns is how a plain "no" counts: skip when the product simply
		// lacks the feature, warn when the remedy is a setting or a grant.
		absentWarns bool
	}
	list := []capCheck{
		{"probe.session-locks", "session locks exclude a second connection (no stub)", func(c dialects.Capabilities) dialects.Capability { return c.SessionLocks }, false},
		{"probe.skip-locked", "SELECT … FOR UPDATE SKIP LOCKED skips a locked row", func(c dialects.Capabilities) dialects.Capability { return c.SkipLocked }, false},
		{"probe.nowait", "SELECT … FOR UPDATE NOWAIT fails at once on a locked row", func(c dialects.Capabilities) dialects.Capability { return c.NoWait }, false},
		{"probe.lock-listing", "held session locks can be listed with their holder", func(c dialects.Capabilities) dialects.Capability { return c.LockListing }, true},
		{"probe.kill-sessions", "this user may terminate another session", func(c dialects.Capabilities) dialects.Capability { return c.KillSessions }, true},
	}
	out := make([]Check, 0, len(list)+1)
	for _, cc := range list {
		out = append(out, Check{ID: cc.id, Title: cc.title, Run: func(ctx context.Context, env *Env) (string, error) {
			caps, err := env.capabilities(ctx)
			if err != nil {
				return "", err
			}
			c := cc.pick(caps)
			if cc.id == "probe.session-locks" && c.Status == dialects.StatusStub {
				return judgeStub(env, c)
			}
			return judgeCapability(c, cc.absentWarns)
		}})
	}
	out = append(out, Check{ID: "probe.privileges", Title: "the user has the privileges the strategies need", Run: checkPrivileges})
	out = append(out, Check{ID: "probe.two-holders", Title: "no eviction, restart or failover can hand a lock to two holders", Run: checkTwoHolders})
	out = append(out, Check{ID: "probe.risks", Title: "the deployment has no other risk for its locks", Run: checkRisks})
	return out
}

// judgeCapability turns a probed capability into a check outcome.
func judgeCapability(c dialects.Capability, absentWarns bool) (string, error) {
	switch c.Status {
	case dialects.StatusYes:
		return c.Detail, nil
	case dialects.StatusStub:
		return "", &Remedied{Err: fmt.Errorf("a stub, not the real thing: %s", c.Detail), Remedy: c.Remedy}
	case dialects.StatusNo:
		if absentWarns {
			return "", &Remedied{Err: Warnf("%s", c.Detail), Remedy: c.Remedy}
		}
		return "", Skipf("%s", c.Detail)
	default:
		return "", &Remedied{Err: Warnf("could not tell: %s", c.Detail), Remedy: c.Remedy}
	}
}

// judgeStub judges session-lock functions that grant a lock twice: a
// failure when schedlock would use them, a warning when its session locker
// already refuses this database (CockroachDB), so only the table strategy
// is ever used there.
func judgeStub(env *Env, c dialects.Capability) (string, error) {
	if _, err := env.SessionLocker(); err != nil {
		return "", &Remedied{Err: Warnf("a stub, not a lock — schedlock refuses the session strategy here: %s", c.Detail), Remedy: c.Remedy}
	}
	return "", &Remedied{Err: fmt.Errorf("a stub, not a lock: %s", c.Detail), Remedy: c.Remedy}
}

// checkPrivileges warns with the GRANTs for every privilege the probe found
// missing.
func checkPrivileges(ctx context.Context, env *Env) (string, error) {
	caps, err := env.capabilities(ctx)
	if err != nil {
		return "", err
	}
	if len(caps.MissingPrivileges) == 0 {
		return "no missing privilege found", nil
	}
	var missing, grants []string
	for _, p := range caps.MissingPrivileges {
		missing = append(missing, fmt.Sprintf("%s (needed for %s)", p.Privilege, p.NeededFor))
		if p.Grant != "" {
			grants = append(grants, p.Grant)
		}
	}
	return "", &Remedied{Err: Warnf("missing: %s", strings.Join(missing, "; ")), Remedy: strings.Join(grants, "; ")}
}

// checkTwoHolders fails with every risk the probe found under which the
// store can hand a lock to a second holder while the first still runs
// (dialects.Risk.TwoHolders: a store that evicts keys, forgets them on a
// restart, replicates asynchronously), unless the run accepts it
// (Config.AllowRisks): then it warns. It passes where the backend
// reports none (the SQL databases).
func checkTwoHolders(ctx context.Context, env *Env) (string, error) {
	caps, err := env.capabilities(ctx)
	if err != nil {
		return "", err
	}
	if caps.Risks == nil {
		return fmt.Sprintf("the %s backend reports no deployment risks", env.Backend.Detected().Dialect), nil
	}
	var refused, accepted, remedies []string
	for _, r := range caps.Risks {
		switch {
		case !r.TwoHolders():
		case slices.Contains(env.run.allowRisks, r.ID):
			accepted = append(accepted, r.ID+": "+r.Detail)
		default:
			refused = append(refused, r.ID+": "+r.Detail)
			remedies = append(remedies, r.Remedy+"; or accept it with "+string(dialects.TermAllowRisk)+" "+r.ID)
		}
	}
	switch {
	case len(refused) > 0:
		return "", &Remedied{Err: fmt.Errorf("%s", strings.Join(refused, "; ")), Remedy: strings.Join(remedies, "; ")}
	case len(accepted) > 0:
		return "", Warnf("accepted: %s", strings.Join(accepted, "; "))
	}
	return "no risk of two holders found", nil
}

// checkRisks warns with every other risk the probe found (a single
// member, a setting detection could not read: availability, not two
// holders); it passes where there is none, or the backend reports none
// (the SQL databases).
func checkRisks(ctx context.Context, env *Env) (string, error) {
	caps, err := env.capabilities(ctx)
	if err != nil {
		return "", err
	}
	if caps.Risks == nil {
		return fmt.Sprintf("the %s backend reports no deployment risks", env.Backend.Detected().Dialect), nil
	}
	var found, remedies []string
	for _, r := range caps.Risks {
		if r.TwoHolders() {
			continue // probe.two-holders judges them
		}
		found = append(found, r.ID+": "+r.Detail)
		remedies = append(remedies, r.Remedy)
	}
	if len(found) == 0 {
		return "no other risk found", nil
	}
	return "", &Remedied{Err: Warnf("%s", strings.Join(found, "; ")), Remedy: strings.Join(remedies, "; ")}
}

// CheckAllowRisks refuses an accepted risk ID that is not one of
// dialects.TwoHolderRiskIDs (an error matching dialects.ErrInvalid).
func CheckAllowRisks(ids []string) error {
	known := dialects.TwoHolderRiskIDs()
	for _, id := range ids {
		if !slices.Contains(known, id) {
			return dialects.Invalidf("unknown risk %q: the risks that can hand a lock to two holders are %s", id, elide.Whole(strings.Join(known, ", ")))
		}
	}
	return nil
}

// capabilities probes the database once per run.
func (e *Env) capabilities(ctx context.Context) (dialects.Capabilities, error) {
	rs := e.run
	rs.capsOnce.Do(func() {
		p, ok := rs.backend.(dialects.Prober)
		if !ok {
			none := dialects.CapUnknown("the "+rs.backend.Detected().Dialect+" backend has no probe", "")
			rs.caps = dialects.Capabilities{SessionLocks: none, SkipLocked: none, NoWait: none, Isolation: none, LockListing: none, KillSessions: none}
			return
		}
		rs.caps, rs.capsErr = p.Probe(ctx, dialects.ProbeOptions{})
	})
	return rs.caps, rs.capsErr
}
