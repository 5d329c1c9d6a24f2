package oracle

import (
	"database/sql"
	"strings"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/locktable"
)

// oldIdentifierBytes is the identifier limit before Oracle 12.2 (128 from
// 12.2 on).
const oldIdentifierBytes = 30

// NewTableLocker returns the lease-table locker for table t: the locktable
// engine with Oracle's SQL (Builder), which also covers the two places
// where Oracle answers with an error what other databases answer with a
// row count: ORA-00001 on acquire is the lock held by the racer whose
// insert won (Builder.IsDuplicateKey), and ORA-00955 on create is a table
// that exists (Builder.Create ignores it). It also administers Liquibase's
// lock table (Builder's LiquibaseInspect and LiquibaseRelease).
//
// Before 12.2, where identifiers are limited to 30 bytes, a longer table
// or schema name is refused with dialects.ErrInvalid, naming the limit.
func NewTableLocker(db *sql.DB, info dialects.Info, t dialects.Table) (dialects.TableLocker, error) {
	schema, err := t.Schema()
	if err != nil {
		return nil, dialects.Wrap(Name, "table locker", err)
	}
	if info.Version != "" && !versionAtLeast(info.Version, 12, 2) {
		for _, part := range strings.Split(schema.Table, ".") {
			if len(part) > oldIdentifierBytes {
				return nil, dialects.Wrap(Name, "table locker", dialects.Invalidf(
					"Oracle %s limits identifiers to %d bytes, and %q has %d: give a shorter table name (12.2 and later allow 128)",
					info.Version, oldIdentifierBytes, part, len(part)))
			}
		}
	}
	l, err := locktable.New(db, &Builder{}, t)
	if err != nil {
		return nil, dialects.Wrap(Name, "table locker", err)
	}
	return l, nil
}
