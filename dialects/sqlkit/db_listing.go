package sqlkit

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// Liquibase returns the administration of the Liquibase lock table called
// table (LiquibaseTable when empty). It sends nothing.
func (db *DB) Liquibase(table string) (dialects.LiquibaseLock, error) {
	t, err := dialects.ResolveAdminTable(dialects.Table{Preset: dialects.PresetLiquibase, Name: table})
	if err != nil {
		return nil, err
	}
	tl, err := db.TableLocker(dialects.Table{})
	if err != nil {
		return nil, err
	}
	op, ok := tl.(dialects.LiquibaseOpener)
	if !ok {
		return nil, dialects.Wrap(db.Dialect.Name, "liquibase", fmt.Errorf("%w: no Liquibase lock support for %s", dialects.ErrUnsupported, db.Info.Product))
	}
	return op.Liquibase(t.Name)
}

// LockAdmin returns the dialect's lock administration, or nil when it has
// none. It names session locks as the DSN's session names ask (see
// SessionNames), or as by default when they do not suit this database:
// callers check SessionNames first.
func (db *DB) LockAdmin() dialects.LockAdmin {
	ae, ok := db.engine.(AdminEngine)
	if !ok {
		return nil
	}
	n, err := db.SessionNames()
	if err != nil {
		n = dialects.SessionNames{} // the commands check SessionNames first
	}
	return ae.NewLockAdmin(n)
}

// HasSessionLocks reports whether this database has session locks that a
// LockAdmin can list (false on SQLite, CockroachDB, TiDB, …).
func (db *DB) HasSessionLocks() bool {
	_, admin := db.engine.(AdminEngine)
	se, session := db.engine.(SessionEngine)
	if !admin || !session {
		return false
	}
	_, err := se.NewSessionLocker(dialects.SessionNames{})
	return err == nil
}

// LockTables returns the KnownTables that exist: from the dialect's
// LockAdmin when it has one, else by reading each known table's columns.
func (db *DB) LockTables(ctx context.Context) ([]dialects.Table, error) {
	if admin := db.LockAdmin(); admin != nil {
		tables, err := admin.LockTables(ctx)
		return tables, dialects.Wrap(db.Dialect.Name, "find lock tables", err)
	}
	var out []dialects.Table
	for _, t := range dialects.KnownTables() {
		_, err := db.TableColumns(ctx, t)
		switch {
		case errors.Is(err, dialects.ErrNoTable):
			continue
		case err != nil:
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// TableColumns reads the columns of table t (any preset, or none). A
// missing table gives an error matching ErrNoTable.
func (db *DB) TableColumns(ctx context.Context, t dialects.Table) ([]string, error) {
	var reader dialects.ColumnReader
	if t.Preset == dialects.PresetLiquibase {
		lb, err := db.Liquibase(t.Name)
		if err != nil {
			return nil, err
		}
		reader = lb
	} else {
		tl, err := db.TableLocker(dialects.Table{Name: t.Name})
		if err != nil {
			return nil, err
		}
		defer closeQuietly(tl)
		r, ok := tl.(dialects.ColumnReader)
		if !ok {
			return nil, dialects.Wrap(db.Dialect.Name, "columns", fmt.Errorf("%w: cannot read table columns on %s", dialects.ErrUnsupported, db.Info.Product))
		}
		reader = r
	}
	cols, err := reader.Columns(ctx)
	if errors.Is(err, dialects.ErrNoTable) {
		return nil, dialects.Wrap(db.Dialect.Name, "columns", fmt.Errorf("%w: table %s does not exist (or this user cannot see it)", dialects.ErrNoTable, t.Name))
	}
	return cols, dialects.Wrap(db.Dialect.Name, "columns", err)
}

func closeQuietly(v any) {
	if c, ok := v.(io.Closer); ok {
		_ = c.Close()
	}
}

// ListLocks lists table locks and session locks as opts selects. A given
// table that does not exist is an error matching ErrNoTable; one of the
// wrong shape a *ShapeError (ErrInvalid), as is a bad glob.
func (db *DB) ListLocks(ctx context.Context, opts dialects.ListOptions) (*dialects.Listing, error) {
	if err := opts.CheckNames(); err != nil {
		return nil, err
	}
	switch opts.Strategy {
	case "", dialects.StrategyTable, dialects.StrategySession:
	default:
		return nil, dialects.Invalidf("unknown strategy %q: use session or table", opts.Strategy)
	}
	var tables []dialects.Table
	var notes []string
	switch {
	case opts.Strategy == dialects.StrategySession:
	case opts.Resolved && len(opts.Tables) > 0:
		tables = opts.Tables
	default:
		var err error
		if tables, notes, err = db.resolveTables(ctx, opts.Tables); err != nil {
			return nil, err
		}
	}
	out := &dialects.Listing{Locks: []dialects.LockEntry{}, Tables: tables, Notes: notes}
	labels := literalNames(opts.Names)
	for _, t := range tables {
		entries, err := db.listTable(ctx, t)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			labels = append(labels, e.Name)
		}
		out.Locks = append(out.Locks, entries...)
	}
	if opts.Strategy != dialects.StrategyTable {
		sessions, note, err := db.listSessions(ctx, labels, literalNames(opts.Names))
		if err != nil {
			return nil, err
		}
		if note != "" {
			out.Notes = append(out.Notes, note)
		}
		out.Locks = append(out.Locks, sessions...)
	}
	out.Locks = dialects.FilterLocks(out.Locks, opts)
	dialects.SortLocks(out.Locks)
	if note := futureLockNote(out.Locks); note != "" {
		out.Notes = append(out.Notes, note)
	}
	for _, e := range out.Locks {
		if e.State == dialects.StateExpired {
			out.Notes = append(out.Notes, "lock tables keep the owner when a lock is released, so released and expired rows both show as expired")
			break
		}
	}
	return out, nil
}

// FindLock reads everything known about the lock called name: its row in
// each table (Liquibase's row only for LiquibaseLockName), whatever its
// state, and the session holding it. tables as in ListOptions. A preset
// table that cannot store name (NameTooLongError) is passed over when the
// tables were found, and refuses the name when the caller named it.
func (db *DB) FindLock(ctx context.Context, name string, tables []dialects.Table) (*dialects.Listing, error) {
	if err := dialects.CheckName(name); err != nil {
		return nil, err
	}
	resolved, notes, err := db.resolveTables(ctx, tables)
	if err != nil {
		return nil, err
	}
	out := &dialects.Listing{Locks: []dialects.LockEntry{}, Tables: resolved, Notes: notes}
	_, discovered := dialects.KnownTablesZone(tables)
	for _, t := range resolved {
		e, found, err := db.inspectTable(ctx, t, name)
		var tooLong *dialects.NameTooLongError
		var unstorable *dialects.UnstorableNameError
		if discovered && (errors.As(err, &tooLong) || errors.As(err, &unstorable)) {
			// A found table that cannot hold the name has no lock of
			// that name; a table named by the caller refuses it.
			continue
		}
		if err != nil {
			return nil, err
		}
		if found {
			out.Locks = append(out.Locks, e)
		}
	}
	if db.HasSessionLocks() {
		e, found, err := db.LockAdmin().SessionLock(ctx, name)
		if err != nil {
			return nil, dialects.Wrap(db.Dialect.Name, "find session lock", err)
		}
		if found {
			out.Locks = append(out.Locks, e)
		}
		raw, found, err := rawSessionLock(ctx, db.LockAdmin(), name)
		if err != nil {
			return nil, dialects.Wrap(db.Dialect.Name, "find session lock", err)
		}
		if found {
			out.Locks = append(out.Locks, raw)
		}
	}
	dialects.SortLocks(out.Locks)
	return out, nil
}

// resolveTables completes the given tables and checks their shape, or
// finds the known ones (skipping, with a note, those of the wrong shape).
func (db *DB) resolveTables(ctx context.Context, given []dialects.Table) ([]dialects.Table, []string, error) {
	zone, discover := dialects.KnownTablesZone(given)
	if discover {
		found, err := db.LockTables(ctx)
		if err != nil {
			return nil, nil, err
		}
		found = inTimeZone(found, zone)
		var tables []dialects.Table
		var notes []string
		for _, t := range found {
			cols, err := db.TableColumns(ctx, t)
			if err == nil {
				err = dialects.CheckColumns(t.Name, t.Preset, cols)
			}
			var shape *dialects.ShapeError
			if errors.As(err, &shape) {
				notes = append(notes, "skipped "+shape.Error())
				continue
			}
			if err != nil {
				return nil, nil, err
			}
			tables = append(tables, t)
		}
		return tables, notes, nil
	}
	tables := make([]dialects.Table, 0, len(given))
	for _, g := range given {
		t, err := dialects.ResolveAdminTable(g)
		if err != nil {
			return nil, nil, err
		}
		cols, err := db.TableColumns(ctx, t)
		if err != nil {
			return nil, nil, err
		}
		if t.Preset == "" {
			if t.Preset, err = dialects.MatchPreset(t.Name, cols); err != nil {
				return nil, nil, err
			}
		} else if err := dialects.CheckColumns(t.Name, t.Preset, cols); err != nil {
			return nil, nil, err
		}
		tables = append(tables, t)
	}
	return tables, nil, nil
}

// listTable reads every lock of table t.
func (db *DB) listTable(ctx context.Context, t dialects.Table) ([]dialects.LockEntry, error) {
	if t.Preset == dialects.PresetLiquibase {
		e, found, err := db.inspectLiquibase(ctx, t)
		if err != nil || !found {
			return nil, err
		}
		return []dialects.LockEntry{e}, nil
	}
	tl, err := db.TableLocker(t)
	if err != nil {
		return nil, err
	}
	defer closeQuietly(tl)
	lister, ok := tl.(interface {
		List(ctx context.Context) ([]dialects.Row, error)
	})
	if !ok {
		return nil, dialects.Wrap(db.Dialect.Name, "list", fmt.Errorf("%w: the table locker of %s cannot list", dialects.ErrUnsupported, db.Info.Product))
	}
	rows, err := lister.List(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]dialects.LockEntry, 0, len(rows))
	for _, r := range rows {
		out = append(out, dialects.TableEntry(t, r))
	}
	return out, nil
}

// inspectTable reads the lock called name in table t.
func (db *DB) inspectTable(ctx context.Context, t dialects.Table, name string) (dialects.LockEntry, bool, error) {
	if t.Preset == dialects.PresetLiquibase {
		if name != dialects.LiquibaseLockName {
			return dialects.LockEntry{}, false, nil
		}
		return db.inspectLiquibase(ctx, t)
	}
	tl, err := db.TableLocker(t)
	if err != nil {
		return dialects.LockEntry{}, false, err
	}
	defer closeQuietly(tl)
	row, found, err := tl.Inspect(ctx, name)
	if err != nil || !found {
		return dialects.LockEntry{}, false, err
	}
	return dialects.TableEntry(t, row), true, nil
}

func (db *DB) inspectLiquibase(ctx context.Context, t dialects.Table) (dialects.LockEntry, bool, error) {
	lb, err := db.Liquibase(t.Name)
	if err != nil {
		return dialects.LockEntry{}, false, err
	}
	row, found, err := lb.Inspect(ctx)
	if err != nil || !found {
		return dialects.LockEntry{}, false, err
	}
	return dialects.LiquibaseEntry(t.Name, row), true, nil
}

// listSessions lists the session locks, labelled with labels and, for
// those of `schedlock run`, with the name their holder's application name
// gives (nameRunLocks). Where the
// server cannot list them it returns a note and looks up each of lookup
// by name instead.
func (db *DB) listSessions(ctx context.Context, labels, lookup []string) ([]dialects.LockEntry, string, error) {
	if !db.HasSessionLocks() {
		return nil, "", nil
	}
	admin := db.LockAdmin()
	entries, err := admin.SessionLocks(ctx, dedupe(labels))
	var unavailable *dialects.ListingUnavailableError
	switch {
	case errors.As(err, &unavailable):
		var found []dialects.LockEntry
		for _, name := range dedupe(lookup) {
			e, ok, err := admin.SessionLock(ctx, name)
			if err != nil {
				return nil, "", dialects.Wrap(db.Dialect.Name, "find session lock", err)
			}
			if ok {
				found = append(found, e)
			}
			raw, ok, err := rawSessionLock(ctx, admin, name)
			if err != nil {
				return nil, "", dialects.Wrap(db.Dialect.Name, "find session lock", err)
			}
			if ok {
				found = append(found, raw)
			}
		}
		known, err := knownSessionLocks(ctx, admin)
		if err != nil {
			return nil, "", dialects.Wrap(db.Dialect.Name, "find session lock", err)
		}
		found = append(found, known...)
		note := unavailable.Error()
		if len(lookup) == 0 {
			note += "; " + string(dialects.TermFindLock) + " still finds its holder"
		}
		return found, note, nil
	case err != nil:
		return nil, "", dialects.Wrap(db.Dialect.Name, "list session locks", err)
	}
	nameRunLocks(admin, entries)
	return entries, "", nil
}

// literalNames returns the patterns that match only themselves.
func literalNames(patterns []string) []string {
	var out []string
	for _, p := range patterns {
		if !strings.ContainsAny(p, `*?[\`) {
			out = append(out, p)
		}
	}
	return out
}

func dedupe(names []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, n := range names {
		if n != "" && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

// NullMillis turns milliseconds since the Unix epoch into a UTC time; NULL
// is the zero time. Dialects use it to read listing queries.
func NullMillis(ms sql.NullInt64) time.Time {
	if !ms.Valid {
		return time.Time{}
	}
	return time.UnixMilli(ms.Int64).UTC()
}
