package kubernetes

import (
	"net/url"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/schedlock/schedlock/dialects"
)

// Defaults of the DSN's options.
const (
	// DefaultQPS and DefaultBurst are the client's rate limit: client-go's
	// own default (5 requests a second, bursts of 10) would hold a lock
	// cycle of two requests to under three a second, and a refresh could
	// wait behind a burst of listings. 50/100 stays far below what API
	// Priority and Fairness gives one client on a real cluster.
	DefaultQPS   = 50
	DefaultBurst = 100
	// DefaultTimeout bounds each request (rest.Config.Timeout).
	DefaultTimeout = 10 * time.Second
	// EveryNamespace is the DSN's namespace that names them all
	// (k8s://*): locks ls lists every Lease the account may list across
	// the cluster; nothing can be locked there.
	EveryNamespace = "*"
	// DefaultMaxSkew is how far another host's clock may be taken to be
	// ahead of this one when a Lease is first seen (see judge).
	DefaultMaxSkew = 10 * time.Second
)

// config is what a Kubernetes DSN says. It holds no credential: those are
// in the kubeconfig or the pod's service account, never in the DSN.
type config struct {
	namespace  string // "" for the kubeconfig's (or the pod's) namespace
	every      bool   // k8s://*: every namespace (listing only)
	kubeconfig string
	context    string
	qps        float32 // < 0: no client-side limit
	burst      int
	timeout    time.Duration
	maxSkew    time.Duration
}

// parseConfig reads k8s://[NAMESPACE][?opts] (kubernetes://, and dburl's
// other names of the scheme, k://, k8://, kc:// and kube://, alike);
// k8s://* names every namespace, for listing.
// Options: kubeconfig (a file; default: $KUBECONFIG, ~/.kube/config, then
// the pod's service account), context (a kubeconfig context), qps and
// burst (the client's rate limit, default 50 and 100; qps=-1 turns it
// off), timeout (each request, default 10s), max-skew (default 10s).
func parseConfig(conn string) (config, error) {
	scheme, rest, ok := strings.Cut(conn, "://")
	switch scheme {
	case "k8s", "kubernetes", "k", "k8", "kc", "kube": // dburl's names of the scheme
	default:
		ok = false
	}
	if !ok {
		return config{}, dialects.Invalidf("a Kubernetes DSN is k8s://NAMESPACE or kubernetes://NAMESPACE")
	}
	rest, query, _ := strings.Cut(rest, "?")
	c := config{qps: DefaultQPS, burst: DefaultBurst, timeout: DefaultTimeout, maxSkew: DefaultMaxSkew}
	c.namespace = strings.Trim(rest, "/")
	if c.namespace == EveryNamespace {
		c.namespace, c.every = "", true
	}
	if c.namespace != "" && !validNamespace(c.namespace) {
		return config{}, dialects.Invalidf("namespace %q is not a Kubernetes namespace name (lower-case letters, digits and '-', at most 63, starting and ending with a letter or digit)", c.namespace)
	}
	values, err := url.ParseQuery(query)
	if err != nil {
		return config{}, dialects.Invalidf("the options of the DSN are not a valid query string")
	}
	for k, vs := range values {
		v := vs[len(vs)-1]
		switch k {
		case "kubeconfig":
			c.kubeconfig = v
		case "context":
			c.context = v
		case "qps":
			f, err := strconv.ParseFloat(v, 32)
			if err != nil || f == 0 {
				return config{}, dialects.Invalidf("qps=%q is not a request rate such as 50 (or -1 for no client-side limit)", v)
			}
			c.qps = float32(f)
		case "burst":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return config{}, dialects.Invalidf("burst=%q is not a positive number of requests", v)
			}
			c.burst = n
		case "timeout", "max-skew":
			d, err := dialects.PositiveDuration(k, v)
			if err != nil {
				return config{}, err
			}
			if k == "timeout" {
				c.timeout = d
			} else {
				c.maxSkew = d
			}
		default:
			return config{}, dialects.Invalidf("unknown Kubernetes DSN option %q: use kubeconfig, context, qps, burst, timeout or max-skew", k)
		}
	}
	return c, nil
}

// clientConfig loads the client configuration: the kubeconfig named, else
// client-go's usual chain ($KUBECONFIG, ~/.kube/config, in-cluster). It
// returns the namespace to use: the DSN's, else the context's (or the
// pod's), else "default"; "" for every namespace (k8s://*).
func (c config) clientConfig() (*rest.Config, string, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if c.kubeconfig != "" {
		rules.ExplicitPath = c.kubeconfig
	}
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: c.context})
	rc, err := cc.ClientConfig()
	if err != nil {
		return nil, "", err
	}
	ns := c.namespace
	if ns == "" && !c.every {
		if ns, _, err = cc.Namespace(); err != nil || ns == "" {
			ns = "default"
		}
	}
	rc = rest.CopyConfig(rc)
	rc.QPS, rc.Burst, rc.Timeout = c.qps, c.burst, c.timeout
	rc.UserAgent = "schedlock"
	return rc, ns, nil
}
