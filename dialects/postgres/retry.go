package postgres

import "github.com/schedlock/schedlock/dialects/locktable"

// SQLSTATE codes of the lease-table statements' retries and races.
const (
	// codeSerializationFailure: the transaction was aborted to keep
	// SERIALIZABLE isolation; nothing it did remains. CockroachDB and
	// YugabyteDB raise it under their default isolation, PostgreSQL under
	// SERIALIZABLE.
	codeSerializationFailure = "40001"
	// codeDeadlockDetected: the statement was chosen as a deadlock victim
	// and rolled back.
	codeDeadlockDetected = "40P01"
	// codeUniqueViolation: a duplicate key.
	codeUniqueViolation = "23505"
)

var _ locktable.Retrier = Builder{}

// IsRetryable reports the errors after which a lease-table statement,
// which runs alone in autocommit, changed nothing and may be sent again
// (locktable.Retrier): SQLSTATE 40001 (serialization failure, CockroachDB's
// "restart transaction") and 40P01 (deadlock victim). CockroachDB's 40003
// (statement completion unknown) is not one: the statement may have taken
// effect.
func (Builder) IsRetryable(err error) bool {
	return hasCode(err, codeSerializationFailure) || hasCode(err, codeDeadlockDetected)
}
