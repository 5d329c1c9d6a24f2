package cmd

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/internal/iostreams"
	"github.com/schedlock/schedlock/internal/output"
)

// DetectOptions are the inputs of `schedlock detect`.
type DetectOptions struct {
	IO      *iostreams.IOStreams
	Factory *Factory
	Global  *GlobalOptions
	Command string // command path, for usage errors

	// ReadOnly skips the probes that create a table.
	ReadOnly bool
}

// NewCmdDetect builds `schedlock detect`. runF replaces the run function
// in tests.
func NewCmdDetect(f *Factory, g *GlobalOptions, runF func(context.Context, *DetectOptions) error) *cobra.Command {
	opts := &DetectOptions{IO: f.IO, Factory: f, Global: g}
	c := &cobra.Command{
		Use:   "detect",
		Short: "Identify a database and prove which lock features really work on it",
		Long: `detect names the database product, version, variant and compatibility mode,
then proves what it can do for locking:

  session_locks  named session locks, proved with two connections: the second
                 must be refused while the first holds the lock ("stub" when
                 both get it, as with CockroachDB's pg_try_advisory_lock)
  skip_locked    SELECT … FOR UPDATE SKIP LOCKED skips a row another connection
                 holds (proved on a probe table it creates and drops)
  nowait         SELECT … FOR UPDATE NOWAIT fails at once on such a row
  isolation      the session's default isolation level
  lock_listing   held session locks can be listed with their holder
  kill_sessions  this user may terminate other users' sessions

It measures the server clock against this host's clock (clock_skew_ms, server
minus host, at the midpoint of the round trip), lists the privileges this user
lacks with the GRANT that gives each, and recommends a lock strategy (session
or table) and a claim strategy (skip-locked or optimistic) with the reason.

With --read-only nothing is created: SKIP LOCKED and NOWAIT are then judged by
product and version. Taking and releasing the probe's session lock writes
nothing and is always done. Whatever detect creates it removes.

Exit codes: 0 detected, 1 the database could not be reached or probed,
2 usage error (no DSN, bad DSN, unknown -o format), 130 interrupted.`,
		Example: `  # PostgreSQL: product, capabilities and the recommended strategies
  schedlock detect --dsn 'postgres://app@db1:5432/jobs'

  # MariaDB, as JSON for a script
  schedlock detect --dsn 'mysql://app@db2:3306/jobs' -o json

  # Redis: mode, and the risks for locks (eviction, persistence, replication)
  schedlock detect --dsn 'redis://redis1:6379/0'

  # Create nothing on a production server
  schedlock detect --dsn 'postgres://app@db1/jobs' --read-only

  # The recommended lock strategy only, DSN from the environment
  SCHEDLOCK_DSN='mysql://app@db2/jobs' schedlock detect -o json | jq -r .recommended.lock_strategy`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			opts.Command = c.CommandPath()
			if runF != nil {
				return runF(c.Context(), opts)
			}
			return detectRun(c.Context(), opts)
		},
	}
	c.Flags().BoolVar(&opts.ReadOnly, "read-only", false, "create nothing: judge SKIP LOCKED and NOWAIT by version instead of a probe table")
	return c
}

func detectRun(ctx context.Context, o *DetectOptions) error {
	g, f, io := o.Global, o.Factory, o.IO
	target, err := resolveAdminDSN(f, g, o.Command)
	if err != nil {
		return err
	}
	if g.Verbose {
		fmt.Fprintf(io.ErrOut, "schedlock: probing %s\n", target.Redacted())
	}
	progress := io.IsStderrTTY() && !g.Quiet
	if progress {
		fmt.Fprintf(io.ErrOut, "\r\x1b[Kprobing %s…", target.Redacted())
	}
	clearProgress := func() {
		if progress {
			fmt.Fprint(io.ErrOut, "\r\x1b[K")
			progress = false
		}
	}
	defer clearProgress()
	db, err := connectAdmin(ctx, target, o.Command)
	if err != nil {
		return err
	}
	defer db.Close()
	p, err := prober(db)
	if err != nil {
		return target.Scrub(err)
	}
	caps, err := p.Probe(ctx, dialects.ProbeOptions{ReadOnly: o.ReadOnly})
	if err != nil {
		return target.Scrub(err)
	}
	clearProgress()
	report := newDetectReport(target.Redacted(), db.Detected(), caps)

	var buf bytes.Buffer
	if err := writeDetect(&buf, report, g.Format, io.IsStdoutTTY(), io.ColorEnabled(), io.TerminalWidth()); err != nil {
		return err
	}
	_, err = io.Out.Write([]byte(f.Scrubber.String(buf.String())))
	if !g.Quiet {
		found, err := findBlockers(ctx, db, nil, blockerTimeout)
		if err != nil && g.Verbose {
			fmt.Fprintln(io.ErrOut, f.Scrubber.String("schedlock: note: "+cliText(lookupFailed(err))))
		}
		for _, b := range found {
			fmt.Fprintln(io.ErrOut, f.Scrubber.String("schedlock: warning: "+cliText(blockerText(b))))
		}
	}
	return err
}

// detectReport is what `schedlock detect` prints. Its JSON field names are
// a stable interface, documented in docs/detect.md.
type detectReport struct {
	Target            string                      `json:"target"`
	Product           string                      `json:"product"`
	Version           string                      `json:"version"`
	Variant           string                      `json:"variant"`
	Mode              string                      `json:"mode"`
	Dialect           string                      `json:"dialect"`
	Banner            string                      `json:"banner"`
	Capabilities      detectCapabilities          `json:"capabilities"`
	ClockSkewMS       *int64                      `json:"clock_skew_ms"`
	ClockRoundTripMS  *float64                    `json:"clock_round_trip_ms"`
	ServerTime        string                      `json:"server_time"`
	ClockDetail       string                      `json:"clock_detail"`
	MissingPrivileges []dialects.MissingPrivilege `json:"missing_privileges"`
	Risks             []dialects.Risk             `json:"risks"`
	Recommended       detectRecommendation        `json:"recommended"`
}

// detectCapabilities are the capabilities in their documented order.
type detectCapabilities struct {
	SessionLocks dialects.Capability `json:"session_locks"`
	SkipLocked   dialects.Capability `json:"skip_locked"`
	NoWait       dialects.Capability `json:"nowait"`
	Isolation    dialects.Capability `json:"isolation"`
	LockListing  dialects.Capability `json:"lock_listing"`
	KillSessions dialects.Capability `json:"kill_sessions"`
}

type detectRecommendation struct {
	LockStrategy  dialects.Strategy      `json:"lock_strategy"`
	ClaimStrategy dialects.ClaimStrategy `json:"claim_strategy"`
	Reason        string                 `json:"reason"`
	LockReason    string                 `json:"lock_reason"`
	ClaimReason   string                 `json:"claim_reason"`
}

// newDetectReport is the report of caps, its texts in the command line's
// words.
func newDetectReport(target string, info dialects.Info, caps dialects.Capabilities) *detectReport {
	caps = cliCapabilities(caps)
	r := &detectReport{
		Target:  target,
		Product: info.Product,
		Version: info.Version,
		Variant: info.Variant,
		Mode:    info.Mode,
		Dialect: info.Dialect,
		Banner:  info.Banner,
		Capabilities: detectCapabilities{
			SessionLocks: caps.SessionLocks,
			SkipLocked:   caps.SkipLocked,
			NoWait:       caps.NoWait,
			Isolation:    caps.Isolation,
			LockListing:  caps.LockListing,
			KillSessions: caps.KillSessions,
		},
		ClockDetail:       caps.Clock.Detail,
		MissingPrivileges: caps.MissingPrivileges,
		Risks:             caps.Risks,
		Recommended: detectRecommendation{
			LockStrategy:  caps.Recommended.LockStrategy,
			ClaimStrategy: caps.Recommended.ClaimStrategy,
			Reason:        caps.Recommended.Reason(),
			LockReason:    caps.Recommended.LockReason,
			ClaimReason:   caps.Recommended.ClaimReason,
		},
	}
	if c := caps.Clock; c.Measured {
		skew := c.Skew.Round(time.Millisecond).Milliseconds()
		rt := math.Round(float64(c.RoundTrip)/float64(time.Millisecond)*1000) / 1000
		r.ClockSkewMS, r.ClockRoundTripMS = &skew, &rt
		r.ServerTime = output.Time(c.Server)
	}
	if r.Risks == nil {
		r.Risks = []dialects.Risk{}
	}
	if r.MissingPrivileges == nil {
		r.MissingPrivileges = []dialects.MissingPrivilege{}
	}
	return r
}

// writeDetect renders r: JSON, YAML, or a FIELD/VALUE/DETAIL table whose
// field names are the JSON keys (boxed on a terminal and fitted into width
// columns, 0: no limit — on a terminal too narrow for the three columns
// each detail goes under its value, see foldDetail; tab-separated when
// piped).
func writeDetect(w io.Writer, r *detectReport, f output.Format, tty, color bool, width int) error {
	switch f {
	case output.JSON:
		return output.WriteJSON(w, r)
	case output.YAML:
		return output.WriteYAML(w, r)
	case output.Table:
		t := detectTable(r, color)
		if tty && width > 0 && output.NaturalWidth(t) > width {
			t = foldDetail(t)
		}
		t.Width = width
		return output.WriteTable(w, t, tty)
	}
	return fmt.Errorf("unknown output format %q: use one of %s", f, output.List(output.Common))
}

func detectTable(r *detectReport, color bool) output.TableData {
	t := output.TableData{Header: []string{"FIELD", "VALUE", "DETAIL"}}
	add := func(field, value, detail string) {
		if value == "" {
			value = "-"
		}
		t.Rows = append(t.Rows, []string{field, value, detail})
	}
	add("target", r.Target, "")
	add("product", r.Product, r.Banner)
	add("version", r.Version, "")
	add("variant", r.Variant, "")
	add("mode", r.Mode, "")
	add("dialect", r.Dialect, "")
	c := r.Capabilities
	for _, row := range []struct {
		field string
		cap   dialects.Capability
	}{
		{"session_locks", c.SessionLocks},
		{"skip_locked", c.SkipLocked},
		{"nowait", c.NoWait},
	} {
		add("capabilities."+row.field, statusCell(row.cap.Status, color), capabilityDetail(row.cap))
	}
	if c.Isolation.Status == dialects.StatusYes {
		add("capabilities.isolation", c.Isolation.Detail, "the session's default isolation level")
	} else {
		add("capabilities.isolation", statusCell(c.Isolation.Status, color), capabilityDetail(c.Isolation))
	}
	add("capabilities.lock_listing", statusCell(c.LockListing.Status, color), capabilityDetail(c.LockListing))
	add("capabilities.kill_sessions", statusCell(c.KillSessions.Status, color), capabilityDetail(c.KillSessions))
	if r.ClockSkewMS != nil {
		add("clock_skew_ms", fmt.Sprintf("%d", *r.ClockSkewMS),
			fmt.Sprintf("server clock minus host clock at the midpoint of a %s ms round trip; server time %s", trimFloat(*r.ClockRoundTripMS), r.ServerTime))
	} else {
		add("clock_skew_ms", "unknown", r.ClockDetail)
	}
	if len(r.MissingPrivileges) == 0 {
		add("missing_privileges", "none", "")
	}
	for _, p := range r.MissingPrivileges {
		detail := "needed for " + p.NeededFor
		if p.Grant != "" {
			detail += "; fix: " + p.Grant
		}
		add("missing_privileges", p.Privilege, detail)
	}
	for _, k := range r.Risks {
		add("risk", k.ID, k.Detail+"; instead: "+k.Remedy)
	}
	add("recommended.lock_strategy", string(r.Recommended.LockStrategy), r.Recommended.LockReason)
	add("recommended.claim_strategy", string(r.Recommended.ClaimStrategy), r.Recommended.ClaimReason)
	return t
}

// foldDetail turns the FIELD/VALUE/DETAIL table t into two columns, each
// detail on the lines under its value, so that on a narrow terminal the
// value and its detail get all the room the field names leave instead of
// two thirds split into narrow columns.
func foldDetail(t output.TableData) output.TableData {
	out := output.TableData{Header: []string{"FIELD", "VALUE / DETAIL"}}
	for _, row := range t.Rows {
		cell := row[1]
		if row[2] != "" {
			cell += "\n" + row[2]
		}
		out.Rows = append(out.Rows, []string{row[0], cell})
	}
	return out
}

// capabilityDetail is a capability's detail and, when there is one, its
// remedy.
func capabilityDetail(c dialects.Capability) string {
	switch {
	case c.Remedy == "":
		return c.Detail
	case c.Detail == "":
		return "fix: " + c.Remedy
	}
	return c.Detail + "; fix: " + c.Remedy
}

// statusColours are the colours of capability statuses on a terminal.
var statusColours = map[dialects.CapabilityStatus]*output.Colour{
	dialects.StatusYes:     output.Green,
	dialects.StatusNo:      output.Red,
	dialects.StatusStub:    output.BoldRed,
	dialects.StatusUnknown: output.Yellow,
}

func statusCell(s dialects.CapabilityStatus, on bool) string {
	if s == "" {
		s = dialects.StatusUnknown
	}
	return output.PaintWord(on, statusColours, s)
}

// trimFloat prints a millisecond figure without trailing zeros: 0.412, 3.
func trimFloat(v float64) string {
	return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.3f", v), "0"), ".")
}
