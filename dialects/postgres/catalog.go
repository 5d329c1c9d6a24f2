package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
)

// Catalog names the views and functions behind session locks, listing and
// kill. PostgreSQL, CockroachDB, YugabyteDB and openGauss use the pg_
// names (PostgresCatalog). KingbaseES renames much of its catalog sys_
// (sys_locks, sys_stat_activity, sys_terminate_backend, …) and may or may
// not keep the pg_ names beside them, depending on version and mode, so
// detection probes each name on KingbaseES (ProbeCatalog). An empty field
// means the server has neither name.
type Catalog struct {
	Locks      string // pg_locks
	Activity   string // pg_stat_activity
	Database   string // pg_database
	BackendPID string // pg_backend_pid()
	TryLock    string // pg_try_advisory_lock(bigint)
	Unlock     string // pg_advisory_unlock(bigint)
	Terminate  string // pg_terminate_backend(integer)
}

// PostgresCatalog is the catalog of PostgreSQL and of every PostgreSQL-wire
// product but KingbaseES.
var PostgresCatalog = Catalog{
	Locks:      "pg_locks",
	Activity:   "pg_stat_activity",
	Database:   "pg_database",
	BackendPID: "pg_backend_pid",
	TryLock:    "pg_try_advisory_lock",
	Unlock:     "pg_advisory_unlock",
	Terminate:  "pg_terminate_backend",
}

// catalogEntry is one name ProbeCatalog looks for: the field it fills,
// whether it is a relation or a function, and the statement that proves
// it exists without changing anything (the lock functions are strict, so
// a NULL key returns NULL and locks nothing; pg_terminate_backend(NULL)
// signals nobody).
type catalogEntry struct {
	field    func(c *Catalog) *string
	relation bool
	probe    string // %s is the name
}

var catalogEntries = []struct {
	pg, sys string
	catalogEntry
}{
	{"pg_locks", "sys_locks", catalogEntry{func(c *Catalog) *string { return &c.Locks }, true, "SELECT count(*) FROM %s WHERE 1 = 0"}},
	{"pg_stat_activity", "sys_stat_activity", catalogEntry{func(c *Catalog) *string { return &c.Activity }, true, "SELECT count(*) FROM %s WHERE 1 = 0"}},
	{"pg_database", "sys_database", catalogEntry{func(c *Catalog) *string { return &c.Database }, true, "SELECT count(*) FROM %s WHERE 1 = 0"}},
	{"pg_backend_pid", "sys_backend_pid", catalogEntry{func(c *Catalog) *string { return &c.BackendPID }, false, "SELECT %s()"}},
	{"pg_try_advisory_lock", "sys_try_advisory_lock", catalogEntry{func(c *Catalog) *string { return &c.TryLock }, false, "SELECT %s(NULL::bigint)"}},
	{"pg_advisory_unlock", "sys_advisory_unlock", catalogEntry{func(c *Catalog) *string { return &c.Unlock }, false, "SELECT %s(NULL::bigint)"}},
	{"pg_terminate_backend", "sys_terminate_backend", catalogEntry{func(c *Catalog) *string { return &c.Terminate }, false, "SELECT %s(NULL::integer)"}},
}

// Codes that say a probed name does not exist.
const (
	codeUndefinedFunction = "42883"
	codeUndefinedObject   = "42704"
)

// ProbeCatalog finds, for each Catalog field, whether the server has the
// pg_ name or else the sys_ name, by running a statement that uses it and
// changes nothing (see catalogEntries; at most two short statements per
// name, in autocommit on pooled connections). A name whose statement fails
// with "undefined table" (42P01) or "undefined function" (42883) is
// absent; one refused for want of a privilege (42501) exists. Any other
// error stops the probe and is returned.
func ProbeCatalog(ctx context.Context, db *sql.DB) (Catalog, error) {
	var c Catalog
	for _, e := range catalogEntries {
		for _, name := range []string{e.pg, e.sys} {
			exists, err := nameExists(ctx, db, fmt.Sprintf(e.probe, name))
			if err != nil {
				return Catalog{}, fmt.Errorf("probe %s: %w", name, err)
			}
			if exists {
				*e.field(&c) = name
				break
			}
		}
	}
	return c, nil
}

// nameExists runs probe and says whether the name it uses exists.
func nameExists(ctx context.Context, db *sql.DB, probe string) (bool, error) {
	var v any
	err := db.QueryRowContext(ctx, probe).Scan(&v)
	switch {
	case err == nil, hasCode(err, codeInsufficientPrivilege):
		return true, nil
	case hasCode(err, codeUndefinedTable), hasCode(err, codeUndefinedFunction):
		return false, nil
	}
	return false, err
}

// missing lists what the session strategy needs that c lacks, as the two
// names looked for ("pg_try_advisory_lock or sys_try_advisory_lock").
func (c Catalog) missing() []string {
	var out []string
	for _, e := range catalogEntries {
		if *e.field(&c) == "" && e.pg != "pg_terminate_backend" && e.pg != "pg_stat_activity" {
			out = append(out, e.pg+" or "+e.sys)
		}
	}
	return out
}

// errCatalog says which names the session strategy needs and the server
// lacks; nil when none is missing.
func (c Catalog) errMissing() error {
	if m := c.missing(); len(m) > 0 {
		return errors.New("the server has neither " + strings.Join(m, ", nor ") + ", which advisory session locks need")
	}
	return nil
}

// SQL of the session strategy, for a catalog.

func (c Catalog) tryLockSQL() string { return "SELECT " + c.TryLock + "($1::bigint)" }

func (c Catalog) unlockSQL() string { return "SELECT " + c.Unlock + "($1::bigint)" }

// holdsSQL finds the session's own granted lock on a bigint key:
// objsubid 1 marks a bigint key, classid its high and objid its low 32
// bits. Both are unsigned oids, so they are compared as bigint.
func (c Catalog) holdsSQL() string {
	return "SELECT EXISTS (SELECT 1 FROM " + c.Locks + "\n" +
		"WHERE locktype = 'advisory' AND objsubid = 1 AND classid::bigint = $1::bigint AND objid::bigint = $2::bigint\n" +
		"AND pid = " + c.BackendPID + "() AND granted)"
}

func (c Catalog) terminateSQL() string { return "SELECT " + c.Terminate + "($1::integer)" }

func (c Catalog) aliveSQL() string {
	return "SELECT EXISTS (SELECT 1 FROM " + c.Activity + " WHERE pid = $1::integer)"
}
