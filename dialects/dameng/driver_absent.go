//go:build !dameng

package dameng

// DriverLinked reports whether this build contains the driver "dm". This
// build was made without the dameng tag, so it does not: sql.Open("dm", …)
// fails with database/sql's "unknown driver" error. See DriverHint.
const DriverLinked = false
