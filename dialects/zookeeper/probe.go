package zookeeper

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/schedlock/schedlock/dialects"
)

// facts is what detection learned about the ensemble beyond Info.
type facts struct {
	// members is the number of voting members in /zookeeper/config; 0
	// when the node is empty or unreadable (standalone, or before 3.5).
	members int
	// modes are the srvr modes of the servers that answered.
	modes []string
	// srvrRefused is true when no server answered the srvr four-letter
	// word (not in 4lw.commands.whitelist).
	srvrRefused bool
	// built is the build date srvr reported.
	built string
	// membersRead is true once members was read (or is not needed: a
	// standalone server).
	membersRead bool
}

// fourLetterTimeout bounds one four-letter-word exchange.
const fourLetterTimeout = 2 * time.Second

// detect identifies the servers: version and mode from the srvr
// four-letter word (whitelisted by default since 3.5; its own connection,
// not a request of the session). An ensemble's member count is read from
// /zookeeper/config by Probe (members): a lock operation does not need
// it.
func (b *Backend) detect(ctx context.Context) (dialects.Info, *facts) {
	info := dialects.Info{Dialect: Name, Product: Product}
	f := &facts{}
	for _, s := range b.cfg.Servers {
		out, err := fourLetterWord(ctx, s, "srvr")
		if err != nil {
			continue
		}
		version, mode, date := parseSrvr(out)
		if version == "" {
			continue
		}
		if info.Version == "" {
			info.Version, f.built = version, date
		}
		if mode != "" {
			f.modes = append(f.modes, mode)
		}
	}
	f.srvrRefused = info.Version == ""
	f.membersRead = len(f.modes) > 0 && f.modes[0] == "standalone" // no members to count
	setMode(&info, f)
	return info, f
}

// setMode writes info's mode and banner from f.
func setMode(info *dialects.Info, f *facts) {
	switch {
	case len(f.modes) > 0 && f.modes[0] == "standalone":
		info.Mode = "standalone"
	case f.members > 0:
		info.Mode = fmt.Sprintf("ensemble of %d", f.members)
	case len(f.modes) > 0:
		info.Mode = "ensemble (" + strings.Join(f.modes, ", ") + ")"
	}
	if info.Version != "" {
		info.Banner = banner(info.Version, info.Mode, f.built)
	}
}

// members reads the ensemble's voting members from /zookeeper/config
// once (Probe; Detected and Risks show what is known), and writes the
// mode they give into the Info. A failed read is tried again next time.
func (b *Backend) members(ctx context.Context) {
	b.factsMu.Lock()
	read := b.facts == nil || b.facts.membersRead
	b.factsMu.Unlock()
	if read {
		return
	}
	data, _, err := b.get(ctx, "/zookeeper/config")
	if err != nil && !errors.Is(err, zk.ErrNoNode) {
		return
	}
	n := 0
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "server.") && !strings.Contains(line, ":observer") {
			n++
		}
	}
	b.factsMu.Lock()
	defer b.factsMu.Unlock()
	b.facts.members, b.facts.membersRead = n, true
	setMode(&b.info, b.facts)
}

// banner is detect's product line: "ZooKeeper 3.8.4, ensemble of 3,
// built on 2024-02-12 22:16 UTC" (mode and build date when known). The
// srvr line itself is not shown: its build hash is often a packager's
// unexpanded placeholder ("3.8.0-${mvngit.commit.id}").
func banner(version, mode, built string) string {
	b := "ZooKeeper " + version
	if mode != "" {
		b += ", " + mode
	}
	if built != "" {
		b += ", built on " + built
	}
	return b
}

// parseSrvr reads the version ("3.8.4"), mode ("standalone", "leader",
// "follower", "observer") and build date ("2024-02-12 22:16 UTC", "" when
// absent) of a srvr answer.
func parseSrvr(out string) (version, mode, built string) {
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "Zookeeper version: "):
			v := strings.TrimPrefix(line, "Zookeeper version: ")
			if rest, date, ok := strings.Cut(v, ", built on "); ok {
				v, built = rest, strings.TrimSpace(date)
			}
			if i := strings.IndexAny(v, "-,"); i >= 0 {
				v = v[:i]
			}
			version = strings.TrimSpace(v)
		case strings.HasPrefix(line, "Mode: "):
			mode = strings.TrimSpace(strings.TrimPrefix(line, "Mode: "))
		}
	}
	return version, mode, built
}

// fourLetterWord sends a four-letter word to server and returns the
// answer.
func fourLetterWord(ctx context.Context, server, word string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, fourLetterTimeout)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", server)
	if err != nil {
		return "", err
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	}
	if _, err := io.WriteString(c, word); err != nil {
		return "", err
	}
	out, err := io.ReadAll(io.LimitReader(c, 1<<16))
	if err != nil && len(out) == 0 {
		return "", err
	}
	return string(out), nil
}

// Risks implements dialects.RiskReporter: what an operator should know
// about this ensemble before trusting its locks (never nil). None of them
// hands a lock to two holders: ZooKeeper logs every write on a quorum.
//
// The member count is known once Probe read it.
func (b *Backend) Risks() []dialects.Risk {
	out := []dialects.Risk{}
	b.factsMu.Lock()
	defer b.factsMu.Unlock()
	f := b.facts
	if f == nil {
		return out
	}
	switch {
	case b.info.Mode == "standalone":
		out = append(out, dialects.Risk{ID: "standalone",
			Detail: "a standalone server: no failover, and while it is down no lock can be taken or kept (every holder loses its lock)",
			Remedy: "use an ensemble of 3 or 5 for locks that must survive a server's loss"})
	case f.members == 2 || f.members == 4:
		out = append(out, dialects.Risk{ID: "even-members",
			Detail: fmt.Sprintf("an ensemble of %d tolerates no more failures than one of %d", f.members, f.members-1),
			Remedy: "use an odd number of members"})
	}
	if f.srvrRefused {
		out = append(out, dialects.Risk{ID: "srvr-refused",
			Detail: "the srvr four-letter word is refused, so the version and mode are unknown",
			Remedy: "add srvr to 4lw.commands.whitelist"})
	}
	return out
}

// Probe implements dialects.Prober: what a ZooKeeper ensemble offers, the
// server clock read through a write (unless opts.ReadOnly), and whether
// this session may create and delete nodes under the chroot.
func (b *Backend) Probe(ctx context.Context, opts dialects.ProbeOptions) (dialects.Capabilities, error) {
	no := func(what string) dialects.Capability { return dialects.CapNo(what, "") }
	b.members(ctx)
	caps := dialects.Capabilities{
		SessionLocks: no("ZooKeeper locks are Curator's ephemeral sequential nodes, offered as the table strategy"),
		SkipLocked:   no("ZooKeeper has no rows to lock"),
		NoWait:       no("ZooKeeper has no rows to lock"),
		Isolation:    dialects.CapYes("linearizable writes; a session reads its own writes in order, and the locks decide on writes only"),
		LockListing:  dialects.CapYes("lock nodes are listed with their holder's session; waiters are listed too"),
		KillSessions: no("a session cannot be ended by another client; a force release deletes the holder's lock node instead"),
		Recommended: dialects.Recommendation{LockStrategy: dialects.StrategyTable, LockReason: recommendation,
			ClaimReason: "ZooKeeper has no task rows to claim: claims need a SQL database"},
		MissingPrivileges: []dialects.MissingPrivilege{},
		Risks:             b.Risks(),
	}
	if opts.ReadOnly {
		caps.Clock = dialects.Clock{Detail: "not read: reading the ZooKeeper clock takes a write, and the probe is read-only"}
		return caps, nil
	}
	caps.Clock, caps.MissingPrivileges = b.probeWrite(ctx)
	caps.MissingPrivileges = append(caps.MissingPrivileges, b.probeTable(ctx)...)
	if len(caps.MissingPrivileges) > 0 {
		caps.LockListing = dialects.ListingNeeds(caps.MissingPrivileges[0])
	}
	return caps, nil
}

// probeTable checks, writing nothing, that this session may read and
// write the default lock table's node when it exists (its ACL may refuse
// what the chroot's allows): a read of its children, and a write under a
// version it cannot have, which ZooKeeper checks against the ACL before
// the version.
func (b *Backend) probeTable(ctx context.Context) []dialects.MissingPrivilege {
	tl, err := b.LeaseLocker(dialects.Table{})
	if err != nil {
		return nil
	}
	node := tl.(*Locker).root
	if ok, _, err := b.exists(ctx, node); err != nil || !ok {
		return nil
	}
	refused := func(what string, err error) []dialects.MissingPrivilege {
		var pe *dialects.PrivilegeError
		if !errors.As(b.noAuth(node, what, err), &pe) {
			return nil
		}
		return []dialects.MissingPrivilege{{Privilege: pe.Privilege, NeededFor: dialects.NeededForLocks, Grant: pe.Grant}}
	}
	if _, err := call(ctx, func() ([]string, error) { ch, _, err := b.conn.Children(node); return ch, err }); errors.Is(err, zk.ErrNoAuth) {
		return refused("read", err)
	}
	if _, err := call(ctx, func() (*zk.Stat, error) { return b.conn.Set(node, nil, math.MaxInt32) }); errors.Is(err, zk.ErrNoAuth) {
		return refused("write", err)
	}
	return nil
}

// probeWrite creates and deletes an ephemeral node under the chroot (or
// its nearest existing ancestor): the creation time is the server clock,
// a refusal is a missing privilege.
func (b *Backend) probeWrite(ctx context.Context) (dialects.Clock, []dialects.MissingPrivilege) {
	missing := []dialects.MissingPrivilege{}
	parent := b.cfg.Chroot
	for {
		node := parent
		if node == "" {
			node = "/"
		}
		ok, _, err := b.exists(ctx, node)
		if err != nil {
			return dialects.Clock{Detail: "cannot read the server clock: " + err.Error()}, missing
		}
		if ok || parent == "" {
			break
		}
		parent = parent[:lastSlash(parent)]
	}
	p := parent + "/schedlock-probe-" + newUUID()
	before := time.Now()
	_, err := call(ctx, func() (string, error) { return b.conn.Create(p, nil, zk.FlagEphemeral, b.acl) })
	created := time.Now()
	if errors.Is(err, zk.ErrNoAuth) {
		missing = append(missing, dialects.MissingPrivilege{Privilege: "create on " + firstNonEmpty(parent, "/"), NeededFor: "the lock nodes under the chroot",
			Grant: "setAcl " + firstNonEmpty(parent, "/") + " with c and d for this user, or create the chroot for it"})
		return dialects.Clock{Detail: "cannot read the server clock: the probe node could not be created"}, missing
	}
	if err != nil {
		return dialects.Clock{Detail: "cannot read the server clock: " + err.Error()}, missing
	}
	_, stat, err := b.get(ctx, p)
	_, _ = call(ctx, func() (struct{}, error) { return struct{}{}, b.conn.Delete(p, -1) })
	if err != nil {
		return dialects.Clock{Detail: "cannot read the server clock: " + err.Error()}, missing
	}
	server := msTime(stat.Ctime)
	rt := created.Sub(before)
	return dialects.Clock{Server: server, Skew: server.Sub(before.Add(rt / 2)), RoundTrip: rt, Measured: true}, missing
}

func (b *Backend) exists(ctx context.Context, p string) (bool, *zk.Stat, error) {
	type got struct {
		ok   bool
		stat *zk.Stat
	}
	r, err := call(ctx, func() (got, error) { ok, s, err := b.conn.Exists(p); return got{ok, s}, err })
	return r.ok, r.stat, err
}

func firstNonEmpty(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}
