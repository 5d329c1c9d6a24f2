package etcd

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/schedlock/schedlock/dialects"
)

// Backend is one opened etcd cluster: one client (one gRPC connection per
// member it talks to) shared by its lockers, and what detection found. It
// implements dialects.Backend, LockLister, LockBreaker and Prober.
type Backend struct {
	cli   *clientv3.Client
	cfg   config
	info  dialects.Info
	facts Facts

	// bg outlives every call: the revokes and at-least deletes that a
	// release leaves to run after it returned. Close cancels it.
	bg     context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	closeOnce sync.Once
	closeErr  error
	bgMu      sync.Mutex
	closed    bool // guarded by bgMu: no more background work

	spares spares
	renew  renewer // one-off keep-alives, on one stream

	lockersMu sync.Mutex
	lockers   map[string]*Locker // by lock-space base

	// membersMu guards the member list in facts and the mode in info,
	// read once when first needed (members).
	membersMu   sync.Mutex
	membersRead bool

	// acquired counts the backend's acquires: its first lease is
	// released by revoking its etcd lease, the later ones keep theirs as
	// spares (lease.Release).
	acquired atomic.Int64

	anchorOnce sync.Once // the waiters' watch stream (anchorWatchStream)
}

var (
	_ dialects.Backend      = (*Backend)(nil)
	_ dialects.LockLister   = (*Backend)(nil)
	_ dialects.LockBreaker  = (*Backend)(nil)
	_ dialects.Prober       = (*Backend)(nil)
	_ dialects.RiskReporter = (*Backend)(nil)
)

// Facts is what detection learned about the cluster.
type Facts struct {
	// Members are the cluster's members as the endpoint reported them.
	Members []Member
	// Leader is the member id of the leader the endpoint follows.
	Leader uint64
	// Endpoint is the endpoint that answered the status request.
	Endpoint string
	// ServerVersion and ClusterVersion are what that endpoint reported.
	ServerVersion string
	// Prefix is the lock-space prefix of the DSN ("" for the root).
	Prefix string
}

// Member is one member of the cluster.
type Member struct {
	ID         uint64
	Name       string
	ClientURLs []string
	Learner    bool
}

// Open connects to the cluster conn names (an etcd:// or etcds:// URL,
// password included) and detects it. A cluster that cannot be reached or
// refuses the login is a *dialects.UnreachableError.
func Open(ctx context.Context, conn string) (*Backend, error) {
	cfg, err := parseConfig(conn)
	if err != nil {
		return nil, err
	}
	tlsCfg, err := cfg.tlsConfig()
	if err != nil {
		return nil, err
	}
	dial := cfg.dialTimeout
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < dial {
		dial = max(time.Until(dl), time.Millisecond)
	}
	if err := refusedEverywhere(ctx, cfg.endpoints); err != nil {
		return nil, dialects.Unreachable(err)
	}
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:            cfg.endpoints,
		Username:             cfg.user,
		Password:             cfg.pass,
		TLS:                  tlsCfg,
		DialTimeout:          dial,
		DialKeepAliveTime:    5 * time.Second,
		DialKeepAliveTimeout: 5 * time.Second,
		Logger:               zap.NewNop(),
	})
	if err != nil {
		return nil, dialects.Unreachable(describeDialError(cfg, tlsCfg, dial, err))
	}
	b := &Backend{cli: cli, cfg: cfg, lockers: map[string]*Locker{}}
	b.bg, b.cancel = context.WithCancel(context.Background())
	b.renew = renewer{cli: cli, bg: b.bg}
	dctx, cancel := context.WithTimeout(ctx, dial)
	defer cancel()
	if err := b.detect(dctx); err != nil {
		_ = b.Close()
		if ctx.Err() != nil {
			return nil, dialects.Unreachable(fmt.Errorf("%w (%v)", ctx.Err(), err))
		}
		return nil, dialects.Unreachable(describeDialError(cfg, tlsCfg, dial, err))
	}
	return b, nil
}

// detect reads the server version and the leader (one Status call: the
// member list is read by Probe, through members).
func (b *Backend) detect(ctx context.Context) error {
	var st *clientv3.StatusResponse
	var errs []error
	for _, ep := range b.cfg.endpoints {
		s, err := b.cli.Status(ctx, ep)
		if err == nil {
			st, b.facts.Endpoint = s, ep
			break
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	if st == nil {
		return errors.Join(errs...)
	}
	b.facts.ServerVersion, b.facts.Leader, b.facts.Prefix = st.Version, st.Leader, b.cfg.root
	b.info = dialects.Info{
		Dialect: Name,
		Product: Product,
		Version: st.Version,
		Banner:  fmt.Sprintf("etcd %s, leader %x", st.Version, st.Leader),
	}
	return nil
}

// members reads the member list once (Probe; Detected and Risks show
// it from then on; a lock operation does not need it) and completes the Info's mode and
// banner with it. A failed read is tried again next time.
func (b *Backend) members(ctx context.Context) error {
	b.membersMu.Lock()
	defer b.membersMu.Unlock()
	if b.membersRead {
		return nil
	}
	members, err := b.cli.MemberList(ctx)
	if err != nil {
		return err
	}
	b.membersRead = true
	var names []string
	for _, m := range members.Members {
		b.facts.Members = append(b.facts.Members, Member{ID: m.ID, Name: m.Name, ClientURLs: m.ClientURLs, Learner: m.IsLearner})
		names = append(names, firstNonEmpty(m.Name, fmt.Sprintf("%x", m.ID)))
	}
	mode := "single member"
	if n := len(members.Members); n > 1 {
		mode = fmt.Sprintf("cluster of %d members", n)
	}
	b.info.Mode = mode
	b.info.Banner = fmt.Sprintf("etcd %s, %s (%s), leader %x", b.facts.ServerVersion, mode, strings.Join(names, ", "), b.facts.Leader)
	return nil
}

// describeDialError says in one line why the cluster did not answer; a
// refused login keeps the server's error so connectHint can name the fix.
func describeDialError(cfg config, tlsCfg *tls.Config, dial time.Duration, err error) error {
	switch {
	case isAuthError(err):
		return err
	case errors.Is(err, context.DeadlineExceeded), status.Code(err) == codes.DeadlineExceeded, status.Code(err) == codes.Unavailable:
		none := &noAnswerError{where: cfg.where(), within: dial, err: err, tls: tlsCfg != nil}
		if tlsCfg != nil {
			none.tlsErr = tlsProblem(cfg.endpoints, tlsCfg)
		}
		return none
	}
	return err
}

// refusedProbeTimeout bounds refusedEverywhere's dials: a member that
// listens accepts well within it; a slower network is left to gRPC.
const refusedProbeTimeout = 500 * time.Millisecond

// refusedEverywhere returns the first endpoint's dial error when every
// endpoint refuses a TCP connection (nothing listens there), else nil.
// gRPC retries a refused dial until its dial timeout and then says only
// that no member answered; one plain dial per endpoint, all at once,
// says it at once. It returns as soon as one endpoint connects or fails
// otherwise.
func refusedEverywhere(ctx context.Context, endpoints []string) error {
	ctx, cancel := context.WithTimeout(ctx, refusedProbeTimeout)
	defer cancel()
	errs := make(chan error, len(endpoints))
	for _, ep := range endpoints {
		go func() {
			var d net.Dialer
			conn, err := d.DialContext(ctx, "tcp", ep)
			if err == nil {
				_ = conn.Close()
			}
			errs <- err
		}()
	}
	var first error
	for range endpoints {
		err := <-errs
		if !errors.Is(err, syscall.ECONNREFUSED) {
			return nil
		}
		if first == nil {
			first = err
		}
	}
	return first
}

// noAnswerError is a cluster none of whose endpoints answered in time.
type noAnswerError struct {
	where  string
	within time.Duration
	err    error
	tlsErr error // the TLS handshake's failure with an endpoint, if that is why
	tls    bool  // the DSN dials TLS (etcds://)
}

func (e *noAnswerError) Error() string {
	msg := fmt.Sprintf("no etcd member answered at %s within %s", e.where, e.within)
	if e.tlsErr != nil {
		msg += ": " + e.tlsErr.Error()
	}
	return msg
}

// tlsProbeTimeout bounds each step of tlsProblem.
const tlsProbeTimeout = time.Second

// tlsProblem finds why TLS endpoints did not answer, which gRPC's dial
// keeps to itself (it retries a failed handshake until the dial
// timeout): a handshake to each endpoint in turn, then a short read for
// the alert a server that refuses the client's certificate sends after
// it. It returns the first failure, or nil when TLS is not the problem.
func tlsProblem(endpoints []string, tlsCfg *tls.Config) error {
	for _, ep := range endpoints {
		c := tlsCfg.Clone()
		c.NextProtos = []string{"h2"}
		if host, _, err := net.SplitHostPort(ep); err == nil && c.ServerName == "" {
			c.ServerName = host
		}
		conn, err := tls.DialWithDialer(&net.Dialer{Timeout: tlsProbeTimeout}, "tcp", ep, c)
		if err != nil {
			var opErr *net.OpError
			var netErr net.Error
			if errors.As(err, &opErr) && opErr.Op == "dial" || errors.As(err, &netErr) && netErr.Timeout() {
				continue // not listening, or no answer at all: not a TLS matter
			}
			return fmt.Errorf("the TLS handshake with %s failed: %w", ep, err)
		}
		_ = conn.SetReadDeadline(time.Now().Add(tlsProbeTimeout))
		_, err = conn.Read(make([]byte, 1))
		_ = conn.Close()
		if err != nil && strings.Contains(err.Error(), "remote error: tls:") {
			return fmt.Errorf("%s refused the TLS connection: %w", ep, err)
		}
	}
	return nil
}

// connectHint is the registry's ConnectHint: what to check for a refused
// login or endpoints that do not answer.
func connectHint(err error) string {
	var none *noAnswerError
	switch {
	case isAuthError(err):
		return "check the user name and password of the DSN"
	case errors.As(err, &none) && none.tlsErr != nil:
		switch {
		case dialects.ClientCertRefused(none.tlsErr):
			return "this etcd asks for a client certificate its CA signed: add cert=/path/client.pem&key=/path/client-key.pem to the etcds:// DSN"
		case strings.Contains(none.tlsErr.Error(), "does not look like a TLS handshake"):
			return "that port does not speak TLS: use etcd:// for it"
		}
		return "the member's certificate is not trusted here: name its CA (cacert=/path/ca.pem), and connect by a name or address the certificate holds (or server-name=)"
	case errors.As(err, &none) && none.tls:
		return "is etcd running there, and is that its client port (2379 by default)?"
	case errors.As(err, &none):
		return "is etcd running there, and is that its client port (2379 by default)? Use etcds:// for a TLS port"
	}
	return ""
}

func isAuthError(err error) bool {
	for _, e := range []error{rpctypes.ErrAuthFailed, rpctypes.ErrGRPCAuthFailed, rpctypes.ErrPermissionDenied, rpctypes.ErrGRPCPermissionDenied, rpctypes.ErrUserEmpty, rpctypes.ErrGRPCUserEmpty, rpctypes.ErrInvalidAuthToken, rpctypes.ErrGRPCInvalidAuthToken} {
		if errors.Is(err, e) {
			return true
		}
	}
	code := status.Code(err)
	return code == codes.Unauthenticated || code == codes.PermissionDenied ||
		strings.Contains(err.Error(), "authentication failed") || strings.Contains(err.Error(), "permission denied")
}

func firstNonEmpty(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}

// Detected implements dialects.Backend: the version and leader found at
// open, with the cluster's mode once Probe read its member list (no
// round trip here: run names the backend in its messages).
func (b *Backend) Detected() dialects.Info {
	b.membersMu.Lock()
	defer b.membersMu.Unlock()
	return b.info
}

// Client is the backend's etcd client, for tools that need more than locks
// (benchmarks beside the raw commands).
func (b *Backend) Client() *clientv3.Client { return b.cli }

// Root is the lock-space prefix of the DSN: "" or ending in "/".
func (b *Backend) Root() string { return b.cfg.root }

// Locker implements dialects.Backend: the table strategy on t (see
// TableLocker); the session strategy is unsupported.
func (b *Backend) Locker(strategy dialects.Strategy, t dialects.Table) (dialects.Locker, error) {
	return dialects.LeaseOnlyLocker(Name, "etcd has no session locks; its locks are leases (the table strategy)", strategy, t, b.LeaseLocker)
}

// LeaseLocker returns the locker of the lock space t names: the DSN prefix
// for the table "schedlock" (the default), or the prefix plus "<name>/" for
// another name. Only the schedlock preset exists on etcd.
func (b *Backend) LeaseLocker(t dialects.Table) (dialects.LeaseLocker, error) {
	schema, err := b.schema(t)
	if err != nil {
		return nil, err
	}
	sp := newSpace(b.cfg.root, schema.Table)
	b.lockersMu.Lock()
	defer b.lockersMu.Unlock()
	if l := b.lockers[sp.base]; l != nil {
		return l, nil
	}
	l := newLocker(b, sp, schema)
	b.lockers[sp.base] = l
	return l, nil
}

// schema resolves t on etcd: the schedlock preset, with any table name
// that is one plain path segment.
func (b *Backend) schema(t dialects.Table) (dialects.Schema, error) {
	preset := firstNonEmpty(t.Preset, dialects.PresetSchedlock)
	if preset != dialects.PresetSchedlock {
		return dialects.Schema{}, dialects.Invalidf("etcd keeps its locks in one layout, etcdctl lock's; the %s preset is a SQL table layout: use the schedlock preset", preset)
	}
	s, err := dialects.Table{Preset: preset, Name: t.Name}.Schema()
	if err != nil {
		return dialects.Schema{}, err
	}
	if strings.ContainsAny(s.Table, "/%") {
		return dialects.Schema{}, dialects.Invalidf("table name %q is not one path segment", s.Table)
	}
	return s, nil
}

// Recommend implements dialects.Backend.
func (b *Backend) Recommend() (dialects.Strategy, string) {
	return dialects.StrategyTable, "etcd locks are leased keys with a fencing token (the table strategy)"
}

// ReleaseDeletesKey implements dialects.KeyDeleter: a release, a forced
// expiry and a resume delete the lock's key.
func (b *Backend) ReleaseDeletesKey() bool { return true }

// Close implements dialects.Backend: it revokes the spare leases, stops
// what releases left running (their leases end the keys they kept) and
// closes the client. Leases still held end with their leases' TTL.
func (b *Backend) Close() error {
	b.closeOnce.Do(func() {
		b.bgMu.Lock()
		b.closed = true
		b.bgMu.Unlock()
		b.cancel()
		b.wg.Wait()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		b.spares.drain(ctx, b.cli)
		cancel()
		b.closeErr = b.cli.Close()
		if errors.Is(b.closeErr, context.Canceled) {
			b.closeErr = nil
		}
	})
	return b.closeErr
}

// background runs fn after the call that started it returned, bounded by
// limit and by Close.
func (b *Backend) background(limit time.Duration, fn func(ctx context.Context)) {
	b.bgMu.Lock()
	defer b.bgMu.Unlock()
	if b.closed {
		return
	}
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		ctx, cancel := context.WithTimeout(b.bg, limit)
		defer cancel()
		fn(ctx)
	}()
}
