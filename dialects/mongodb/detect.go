package mongodb

import (
	"context"
	"fmt"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/readpref"

	"github.com/schedlock/schedlock/dialects"
)

// Topologies of Facts.Topology.
const (
	TopologyStandalone = "standalone"
	TopologyReplicaSet = "replica-set"
	TopologySharded    = "sharded"
)

// Facts is what detection read from hello and buildInfo.
type Facts struct {
	// Version is the server's version (buildInfo.version); FerretDB is
	// its own version (ferretdbVersion) when the server is FerretDB.
	Version  string
	FerretDB string
	// Topology is TopologyStandalone, TopologyReplicaSet or
	// TopologySharded (mongos); SetName and Members a replica set's.
	Topology string
	SetName  string
	Members  int
	// WriteConcern is the lock writes' w: "majority" unless the DSN sets
	// w; ReadConcern the DSN's readConcernLevel ("" when unset).
	WriteConcern string
	ReadConcern  string
	// Skew is the server's clock minus this host's, measured from hello's
	// localTime; RoundTrip that hello's round trip.
	Skew      time.Duration
	RoundTrip time.Duration
}

// hello runs the hello command on the primary, sets the clock offset
// from its localTime, and returns its answer.
func (b *Backend) hello(ctx context.Context) (bson.Raw, time.Duration, error) {
	before := time.Now()
	raw, err := b.client.Database("admin").RunCommand(ctx, bson.D{{Key: "hello", Value: 1}}, options.RunCmd().SetReadPreference(readpref.Primary())).Raw()
	after := time.Now()
	if err != nil {
		return nil, 0, err
	}
	rtt := after.Sub(before)
	if lt, ok := raw.Lookup("localTime").DateTimeOK(); ok {
		mid := before.Add(rtt / 2)
		b.offset.Store(int64(time.UnixMilli(lt).Sub(mid)))
	}
	return raw, rtt, nil
}

// detect reads the deployment's facts; opts are the client's options
// (the DSN's write and read concern).
func (b *Backend) detect(ctx context.Context, opts *options.ClientOptions) (Facts, error) {
	h, rtt, err := b.hello(ctx)
	if err != nil {
		return Facts{}, err
	}
	f := Facts{WriteConcern: "majority", Skew: time.Duration(b.offset.Load()), RoundTrip: rtt}
	if wc := opts.WriteConcern; wc != nil {
		f.WriteConcern = fmt.Sprint(wc.W)
		if wc.W == nil {
			f.WriteConcern = "1"
		}
	}
	if rc := opts.ReadConcern; rc != nil {
		f.ReadConcern = rc.Level
	}
	if msg, _ := h.Lookup("msg").StringValueOK(); msg == "isdbgrid" {
		f.Topology = TopologySharded
	} else if set, ok := h.Lookup("setName").StringValueOK(); ok {
		f.Topology, f.SetName = TopologyReplicaSet, set
		if hosts, ok := h.Lookup("hosts").ArrayOK(); ok {
			vals, _ := hosts.Values()
			f.Members = len(vals)
		}
	} else {
		f.Topology = TopologyStandalone
	}
	bi, err := b.client.Database("admin").RunCommand(ctx, bson.D{{Key: "buildInfo", Value: 1}}).Raw()
	if err != nil {
		return Facts{}, err
	}
	f.Version, _ = bi.Lookup("version").StringValueOK()
	f.FerretDB, _ = bi.Lookup("ferretdbVersion").StringValueOK()
	return f, nil
}

func (f Facts) info() dialects.Info {
	product := "MongoDB " + f.Version
	if f.FerretDB != "" {
		product = "FerretDB " + f.FerretDB + " (MongoDB " + f.Version + " protocol)"
	}
	shape := f.Topology
	if f.Topology == TopologyReplicaSet {
		shape = fmt.Sprintf("replica set %s of %d", f.SetName, f.Members)
	}
	return dialects.Info{Dialect: Name, Product: Product, Version: f.Version, Mode: f.Topology,
		Banner: fmt.Sprintf("%s (%s, write concern w:%s)", product, shape, f.WriteConcern)}
}

// belowMajority reports a write concern that a failover can roll back.
func (f Facts) belowMajority() bool {
	return f.WriteConcern != "majority" && !strings.HasPrefix(f.WriteConcern, "majority")
}

// risks are what the deployment cannot promise, with what to do.
func (f Facts) risks() []dialects.Risk {
	out := []dialects.Risk{}
	if f.FerretDB != "" && !atLeastV2(f.FerretDB) {
		out = append(out, dialects.Risk{ID: dialects.RiskNonAtomicUpdates,
			Detail: fmt.Sprintf("FerretDB %s carries out a findAndModify or an update as a read and then a separate write by _id, so two contenders whose conditional updates match the same expired lock both take it (ShedLock's nodes as well as schedlock's)", f.FerretDB),
			Remedy: "keep locks on MongoDB itself, or on a server that applies each single-document update atomically"})
	}
	switch {
	case f.Topology == TopologyStandalone:
		out = append(out, dialects.Risk{ID: "standalone",
			Detail: "a standalone server: while it is down nobody can take or refresh a lock (every holder stops at its lease end), and its data has no replica",
			Remedy: "use a replica set of three members for locks that must outlive one server"})
	case f.Topology == TopologyReplicaSet && f.Members == 1:
		out = append(out, dialects.Risk{ID: "single-member",
			Detail: fmt.Sprintf("replica set %s has one member: while it is down nobody can take or refresh a lock", f.SetName),
			Remedy: "add members (three, or any odd number) so that a majority survives one failure"})
	}
	if f.belowMajority() && (f.Topology != TopologyStandalone) && !(f.Topology == TopologyReplicaSet && f.Members == 1) {
		out = append(out, dialects.Risk{ID: dialects.RiskAsyncReplication,
			Detail: fmt.Sprintf("lock writes use write concern w:%s: a primary that fails before a majority has the write is rolled back, and a second holder takes the lock", f.WriteConcern),
			Remedy: "remove w= from the DSN (lock writes then use w:majority) or set w=majority"})
	}
	if f.ReadConcern != "" && f.ReadConcern != "majority" && f.ReadConcern != "linearizable" && f.Topology != TopologyStandalone {
		out = append(out, dialects.Risk{ID: "read-concern",
			Detail: fmt.Sprintf("readConcernLevel=%s: locks ls and unlock may show a lock whose write a failover later rolls back (lock writes themselves are judged on the primary)", f.ReadConcern),
			Remedy: "use readConcernLevel=majority, or leave it unset"})
	}
	return out
}

// atLeastV2 reports whether a FerretDB version ("v1.24.2", "2.1.0") is 2
// or later. FerretDB 2 is a different engine (PostgreSQL with DocumentDB)
// that was not tested here; the risk is reported for 1.x, whose update
// code was read and raced.
func atLeastV2(v string) bool {
	v = strings.TrimPrefix(v, "v")
	major, _, _ := strings.Cut(v, ".")
	return len(major) > 1 || major >= "2"
}
