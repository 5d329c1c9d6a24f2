package mongodb_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/schedlock/schedlock/checks"
	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/mongodb"
	"github.com/schedlock/schedlock/internal/tcpproxy"
)

// TestNamesWithDollarAndDot: names holding "$" and "." (special in
// MongoDB field names, not in string values) are stored as _id exactly,
// listed back by that name, and two names differing only there are two
// locks.
func TestNamesWithDollarAndDot(t *testing.T) {
	b := openLive(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	coll := checks.NewPrefix()
	l, err := b.LeaseLocker(dialects.Table{Name: coll})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.(dialects.TableCreator).CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.(dialects.TableDropper).DropTable(context.Background()) })
	names := []string{"$set", "reports.daily$eu", "a.b", "a$b", "$$NOW", "{\"$gt\": \"\"}"}
	var leases []dialects.Lease
	for _, n := range names {
		lease, err := l.Acquire(ctx, n, dialects.Options{AtMost: time.Minute, Owner: "o"})
		if err != nil {
			t.Fatalf("acquire %q: %v", n, err)
		}
		leases = append(leases, lease)
	}
	for _, n := range names {
		var d bson.M
		if err := b.Database().Collection(coll).FindOne(ctx, bson.D{{Key: "_id", Value: n}}).Decode(&d); err != nil {
			t.Fatalf("document of %q: %v", n, err)
		}
		if d["_id"] != n {
			t.Errorf("_id %q, want %q", d["_id"], n)
		}
	}
	listing, err := b.ListLocks(ctx, dialects.ListOptions{Tables: []dialects.Table{{Name: coll}}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range listing.Locks {
		got = append(got, e.Name)
	}
	if strings.Join(got, "|") != "$$NOW|$set|a$b|a.b|reports.daily$eu|{\"$gt\": \"\"}" {
		t.Errorf("listed %q", got)
	}
	for _, s := range leases {
		if err := s.Release(ctx); err != nil {
			t.Errorf("release %q: %v", s.Name(), err)
		}
	}
}

// TestUnreachableAndRefused: an unreachable server and a bad DSN are one
// line each, the unreachable one a *dialects.UnreachableError, and the
// password never appears.
func TestUnreachableAndRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close() // nothing listens there now
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err = mongodb.Open(ctx, "mongodb://app:s3cr3t-pw@"+addr+"/jobs?serverSelectionTimeoutMS=500")
	var u *dialects.UnreachableError
	if !errors.As(err, &u) || strings.Contains(err.Error(), "s3cr3t") || strings.Contains(err.Error(), "\n") {
		t.Errorf("open an unreachable server: %v; want one line, an *UnreachableError, without the password", err)
	}
	for _, dsn := range []string{
		"mongodb://app:s3cr3t-pw@h/jobs?collection=system.x",
		"mongodb://app:s3cr3t-pw@h/jo.bs",
		"mongodb+srv://app:s3cr3t-pw@h1,h2/jobs",
		"mongodb://app:s3cr3t-pw@h/jobs?collection=a$b",
	} {
		_, err := mongodb.Open(ctx, dsn)
		if !errors.Is(err, dialects.ErrInvalid) || strings.Contains(err.Error(), "s3cr3t") || strings.Contains(err.Error(), "\n") {
			t.Errorf("open %s: %v; want one line matching ErrInvalid without the password", strings.ReplaceAll(dsn, "s3cr3t-pw", "xxxxx"), err)
		}
	}
}

// TestMissingCollection: a locker on a collection that does not exist
// refuses, as a missing table, and creates nothing (MongoDB's upsert
// would create the collection).
func TestMissingCollection(t *testing.T) {
	b := openLive(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	coll := checks.NewPrefix() + "_absent"
	l, err := b.LeaseLocker(dialects.Table{Name: coll})
	if err != nil {
		t.Fatal(err)
	}
	_, err = l.Acquire(ctx, "job", dialects.Options{AtMost: time.Minute})
	var missing *dialects.MissingTableError
	if !errors.As(err, &missing) {
		t.Fatalf("acquire on a missing collection: %v, want a *MissingTableError", err)
	}
	names, err := b.Database().ListCollectionNames(ctx, bson.D{{Key: "name", Value: coll}})
	if err != nil || len(names) != 0 {
		t.Fatalf("the refused acquire left collections %v (%v)", names, err)
	}
}

// TestAcquireEndedInFlightLeavesNoLock: an acquire whose context ends
// while its update is on the wire (the proxy holds it) still learns the
// outcome, releases the lock it took and fails with the context's error.
func TestAcquireEndedInFlightLeavesNoLock(t *testing.T) {
	p, err := tcpproxy.Start(hostOfDSN(serialDSN(t)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	t.Cleanup(p.Restore)
	dsn := "mongodb://" + p.Addr() + "/schedlock_test"
	b := open(t, dsn)
	direct := openLive(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	coll := checks.NewPrefix()
	dl, err := direct.LeaseLocker(dialects.Table{Name: coll})
	if err != nil {
		t.Fatal(err)
	}
	if err := dl.(dialects.TableCreator).CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = dl.(dialects.TableDropper).DropTable(context.Background()) })
	l, err := b.LeaseLocker(dialects.Table{Name: coll})
	if err != nil {
		t.Fatal(err)
	}
	// The collection is known to exist before the proxy stalls.
	if _, _, err := l.Inspect(ctx, "report"); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Acquire(ctx, "warm", dialects.Options{AtMost: time.Minute}); err != nil {
		t.Fatal(err)
	}
	p.Stall()
	restored := make(chan struct{})
	time.AfterFunc(time.Second, func() { p.Restore(); close(restored) })
	actx, acancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer acancel()
	lease, err := l.Acquire(actx, "report", dialects.Options{AtMost: 10 * time.Minute, AtLeast: 5 * time.Minute, Owner: "in-flight"})
	if err == nil {
		t.Fatalf("acquire succeeded after its context ended (lease %v)", lease.Until())
	}
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "released again") {
		t.Errorf("acquire: %v; want the context's error, the lock released again", err)
	}
	<-restored
	other, err := dl.Acquire(ctx, "report", dialects.Options{AtMost: time.Minute, Owner: "next"})
	if err != nil {
		t.Fatalf("the lock is still taken after the abandoned acquire: %v", err)
	}
	_ = other.Release(ctx)
}

// hostOfDSN is the host:port of a mongodb:// DSN.
func hostOfDSN(dsn string) string {
	rest := dsn[strings.Index(dsn, "://")+3:]
	if i := strings.IndexAny(rest, "/?"); i >= 0 {
		rest = rest[:i]
	}
	return rest
}
