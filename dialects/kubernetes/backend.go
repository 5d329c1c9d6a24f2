package kubernetes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/rest"

	"github.com/schedlock/schedlock/dialects"
)

// Backend is an open client of one Kubernetes API server, acting in one
// namespace. It implements dialects.Backend.
type Backend struct {
	dialects.LeasePauser // Pause and Resume: a lease on the lock's own item

	cfg    config
	ns     string
	host   string // the API server's URL, for messages
	rc     *rest.Config
	cli    *rest.RESTClient // of coordination.k8s.io/v1
	server version.Info
	info   dialects.Info
	seen   *observer

	leases dialects.LeaseSet[*lease] // live leases, ended by Close
}

var _ dialects.Backend = (*Backend)(nil)

// Open loads the client configuration conn names and reads the server's
// version (GET /version), which proves the server answers and accepts the
// credentials. An unreachable server is a *dialects.UnreachableError,
// refused credentials an error naming them; a kubeconfig that cannot be
// loaded is ErrInvalid.
func Open(ctx context.Context, conn string) (*Backend, error) {
	cfg, err := parseConfig(conn)
	if err != nil {
		return nil, err
	}
	rc, ns, err := cfg.clientConfig()
	if err != nil {
		return nil, dialects.Invalidf("kubernetes: no client configuration: %v", oneLine(err))
	}
	cli, err := newRESTClient(rc)
	if err != nil {
		return nil, dialects.Invalidf("kubernetes: client configuration: %v", oneLine(err))
	}
	b := &Backend{cfg: cfg, ns: ns, host: hostOf(rc.Host), rc: rc, cli: cli, seen: newObserver()}
	b.LeasePauser = dialects.LeasePauser{Dialect: Name, Locker: b.LeaseLocker}
	vctx, cancel := context.WithTimeout(ctx, cfg.timeout)
	defer cancel()
	raw, err := cli.Get().AbsPath("/version").Do(vctx).Raw()
	if err != nil {
		return nil, b.requestErr("read the server version", err)
	}
	if err := json.Unmarshal(raw, &b.server); err != nil {
		return nil, fmt.Errorf("kubernetes %s: the server's /version is not Kubernetes': %w", b.host, err)
	}
	b.info = dialects.Info{Dialect: Name, Product: Product, Version: b.server.GitVersion,
		Banner: "Kubernetes " + b.server.GitVersion + " (" + b.server.Platform + ")"}
	return b, nil
}

// hostOf is the API server's scheme and host without any user info.
func hostOf(h string) string {
	u, err := url.Parse(h)
	if err != nil || u.Host == "" {
		return "the API server"
	}
	return u.Scheme + "://" + u.Host
}

// requestErr classifies a failed request: refused credentials (401), a
// namespace the account may not use (403, a *dialects.PrivilegeError),
// and a server that does not answer (*dialects.UnreachableError). Other
// API errors are wrapped as they are.
func (b *Backend) requestErr(op string, err error) error {
	msg := fmt.Errorf("kubernetes %s: %s: %w", b.host, op, err)
	switch {
	case apierrors.IsUnauthorized(err):
		return fmt.Errorf("kubernetes %s: %s: the server refused the credentials (401 Unauthorized): check the kubeconfig's token or client certificate", b.host, op)
	case apierrors.IsForbidden(err) && b.cfg.every:
		return &dialects.PrivilegeError{Privilege: "list on leases.coordination.k8s.io in every namespace (a ClusterRole)",
			Grant: "kubectl create clusterrole schedlock-list --verb=list --resource=leases.coordination.k8s.io && kubectl create clusterrolebinding schedlock-list --clusterrole=schedlock-list --serviceaccount=NAMESPACE:ACCOUNT",
			Err:   errors.New(oneLine(msg))}
	case apierrors.IsForbidden(err):
		return &dialects.PrivilegeError{Privilege: "get, list, create and update on leases.coordination.k8s.io in namespace " + b.ns,
			Grant: fmt.Sprintf("kubectl create role schedlock --verb=get,list,create,update --resource=leases.coordination.k8s.io -n %[1]s && kubectl create rolebinding schedlock --role=schedlock --serviceaccount=%[1]s:ACCOUNT -n %[1]s", b.ns),
			Err:   errors.New(oneLine(msg))}
	case apierrors.IsTimeout(err), apierrors.IsServerTimeout(err), apierrors.IsServiceUnavailable(err), apierrors.IsTooManyRequests(err),
		apierrors.IsInternalError(err), apierrors.IsUnexpectedServerError(err):
		return dialects.Unreachable(msg)
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return msg
	}
	return dialects.Unreachable(msg)
}

// oneLine is err's message on one line.
func oneLine(err error) string {
	s := []rune(err.Error())
	for i, r := range s {
		if r == '\n' || r == '\r' {
			s[i] = ' '
		}
	}
	return string(s)
}

// leaseAPI is the Lease client of namespace ns.
func (b *Backend) leaseAPI(ns string) leaseClient { return leaseClient{c: b.cli, ns: ns} }

// Detected implements dialects.Backend.
func (b *Backend) Detected() dialects.Info { return b.info }

// Namespace is the namespace the backend acts in.
func (b *Backend) Namespace() string { return b.ns }

// Locker implements dialects.Backend: the table strategy only.
func (b *Backend) Locker(strategy dialects.Strategy, t dialects.Table) (dialects.Locker, error) {
	return dialects.LeaseOnlyLocker(Name, "Kubernetes has no session locks; its locks are Leases (the table strategy)", strategy, t, b.LeaseLocker)
}

// LeaseLocker returns the locker t names: the backend's namespace for the
// default table name; the namespace of that name for a table name that is
// a namespace name; else the backend's namespace, with the table name and
// "/" before each lock name (a table of its own, as `bench` and
// `selfcheck` make them).
func (b *Backend) LeaseLocker(t dialects.Table) (dialects.LeaseLocker, error) {
	preset := t.Preset
	if preset == "" {
		preset = dialects.PresetSchedlock
	}
	if preset != dialects.PresetSchedlock {
		return nil, dialects.Invalidf("the Kubernetes backend has client-go's Lease layout only (the schedlock preset), not the %s preset", preset)
	}
	s, err := dialects.Table{Preset: preset, Name: t.Name}.Schema()
	if err != nil {
		return nil, err
	}
	switch ns := s.Table; {
	case validNamespace(ns) && ns != "schedlock":
		return &Locker{b: b, ns: ns, schema: s}, nil
	case b.cfg.every:
		return nil, errEveryNamespace
	case ns == "schedlock":
		return &Locker{b: b, ns: b.ns, schema: s}, nil
	default:
		return &Locker{b: b, ns: b.ns, prefix: ns + "/", schema: s}, nil
	}
}

// errEveryNamespace refuses what needs one namespace on k8s://*.
var errEveryNamespace = dialects.Invalidf("k8s://%s names every namespace, for locks ls only: to lock, unlock or pause, name the Lease's namespace (k8s://NAMESPACE)", EveryNamespace)

// Recommend implements dialects.Backend.
func (b *Backend) Recommend() (dialects.Strategy, string) {
	return dialects.StrategyTable, "Kubernetes locks are Leases written under resourceVersion checks (the table strategy)"
}

// Close implements dialects.Backend: live leases end (without a request:
// their Lease runs out as client-go's does when its holder stops).
func (b *Backend) Close() error {
	b.leases.Close(func(l *lease) { l.end(dialects.BackendClosed()) })
	return nil
}

// endLocal ends this process's live leases of the Lease ns/name whose
// owner is owner (any owner when owner is empty), with err.
func (b *Backend) endLocal(ns, name, owner string, err error) {
	for _, l := range b.leases.Matching(func(l *lease) bool {
		return l.l.ns == ns && l.lease == name && (owner == "" || l.owner == owner)
	}) {
		l.end(err)
	}
}
