package cmd

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/schedlock/schedlock/checks"
	"github.com/schedlock/schedlock/dialects"
)

// cliTerms are the command line's words for each name the backends use
// for an action of the library (dialects.Term): the flags and commands
// that do it here. Every dialects.Term has one (TestCLITermsComplete).
var cliTerms = map[dialects.Term]string{
	dialects.TermStrategyTable:   "--strategy table",
	dialects.TermStrategySession: "--strategy session",
	dialects.TermCreateTable:     "--create-table",
	dialects.TermKillSession:     "unlock --kill-session",
	dialects.TermForceRelease:    "unlock --force",
	dialects.TermListLocks:       "locks ls",
	dialects.TermFindLock:        "locks ls --name NAME",
	dialects.TermReadOnly:        "--read-only",
	dialects.TermAllowRisk:       "--allow-risk",
}

// cliReplacer puts cliTerms in place of the library's terms.
var cliReplacer = func() *strings.Replacer {
	pairs := make([]string, 0, 2*len(cliTerms))
	for term, words := range cliTerms {
		pairs = append(pairs, string(term), words)
	}
	return strings.NewReplacer(pairs...)
}()

// cliText is text with the command line's flags and commands in place of
// the library's terms: the one place where a backend's remedy
// ("use the table strategy (lock.StrategyTable)") becomes flag advice
// ("use --strategy table").
func cliText(text string) string {
	return cliReplacer.Replace(text)
}

// cliRemedy words r as the command line does: "use --strategy table",
// "create it with --create-table or run: CREATE TABLE …".
func cliRemedy(r dialects.Remedy) string { return cliText(r.String()) }

// cliError is err, returned by command c, with its message in the
// command line's words (cliText); errors.Is and errors.As still see every
// error in the chain. Creating the table is "--create-table" on a command
// that has the flag, else "schedlock run --create-table".
func cliError(c *cobra.Command, err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	words := msg
	if c == nil || c.Flags().Lookup("create-table") == nil {
		words = strings.ReplaceAll(words, string(dialects.TermCreateTable), "schedlock run "+cliTerms[dialects.TermCreateTable])
	}
	words = cliText(words)
	if words == msg {
		return err
	}
	return &cliWordedError{msg: words, err: err}
}

type cliWordedError struct {
	msg string
	err error
}

func (e *cliWordedError) Error() string { return e.msg }
func (e *cliWordedError) Unwrap() error { return e.err }

// cliCapability is c with its texts in the command line's words.
func cliCapability(c dialects.Capability) dialects.Capability {
	c.Detail, c.Remedy = cliText(c.Detail), cliText(c.Remedy)
	return c
}

// cliCapabilities is caps with every text in the command line's words.
func cliCapabilities(caps dialects.Capabilities) dialects.Capabilities {
	for _, c := range []*dialects.Capability{&caps.SessionLocks, &caps.SkipLocked, &caps.NoWait,
		&caps.Isolation, &caps.LockListing, &caps.KillSessions} {
		*c = cliCapability(*c)
	}
	caps.Clock.Detail = cliText(caps.Clock.Detail)
	privs := make([]dialects.MissingPrivilege, len(caps.MissingPrivileges))
	for i, p := range caps.MissingPrivileges {
		p.NeededFor, p.Grant = cliText(p.NeededFor), cliText(p.Grant)
		privs[i] = p
	}
	if caps.MissingPrivileges != nil {
		caps.MissingPrivileges = privs
	}
	r := &caps.Recommended
	r.LockReason, r.ClaimReason = cliText(r.LockReason), cliText(r.ClaimReason)
	return caps
}

// cliResults puts every text of a selfcheck report in the command line's
// words.
func cliResults(r *checks.Report) {
	for i := range r.Results {
		res := &r.Results[i]
		res.Detail, res.Remedy = cliText(res.Detail), cliText(res.Remedy)
	}
}
