// Package memory is a backend that keeps its locks in this process's
// memory: memory://NAME opens the store called NAME, shared by every
// handle of the process that opens the same name. It is not database/sql
// and exists to show, and to test, what a backend needs: it is registered
// with one directory and one line in dialects/all, passes the conformance
// suite (dialecttest), and serves the command's unit tests (`run`,
// `locks ls`, `unlock`) without a server.
//
// It has the table strategy only: leases with an owner, a lease end, an
// at-least and a fencing token that grows on every acquire of a name, on
// the host clock (which is the "database" clock here). Each store holds
// lock tables by name; the session strategy is unsupported (there is no
// session whose end could free a lock).
package memory

import (
	"context"
	"fmt"
	"strings"

	"github.com/xo/dburl"

	"github.com/schedlock/schedlock/dialects"
)

// Name is the backend's registry name and URL scheme.
const Name = "memory"

// Product is its Info.Product.
const Product = "memory"

func init() {
	dialects.Register(&dialects.Dialect{
		Name:       Name,
		Title:      "memory",
		Support:    supportRows,
		Schemes:    []dialects.Scheme{{Name: Name, URL: &dburl.Scheme{Name: Name, Generator: genStore, Aliases: []string{"mm"}, Desc: "schedlock in-process memory"}}},
		Forms:      "memory://NAME",
		Starts:     []string{"memory://"},
		Products:   map[string]string{Product: "memory"},
		ConnString: func(u *dburl.URL) (string, error) { return storeName(u.Host + u.Path), nil },
		Open:       func(_ context.Context, t dialects.Target) (dialects.Backend, error) { return Open(t.Conn) },
	})
}

// genStore is the dburl generator of memory://NAME: the store name.
func genStore(u *dburl.URL) (string, string, error) {
	return storeName(u.Host + u.Path), "", nil
}

// storeName is the store a memory URL names: memory://jobs is "jobs".
func storeName(s string) string { return strings.Trim(strings.TrimPrefix(s, "//"), "/") }

// Open returns a handle on the store called name, creating it empty the
// first time; an empty name is refused.
func Open(name string) (*Backend, error) {
	if name == "" {
		return nil, fmt.Errorf("%w: memory:// needs a store name, e.g. memory://jobs", dialects.ErrInvalid)
	}
	return &Backend{store: storeFor(name), name: name}, nil
}
