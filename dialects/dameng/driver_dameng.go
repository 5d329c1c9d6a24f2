//go:build dameng

package dameng

// The database/sql driver "dm". Only this file imports it: the module is
// not on the default Go module proxy, so the default build and go vet
// ./... never compile it. Build with -tags dameng after
// go get gitee.com/chunanyong/dm@<version>.
import _ "gitee.com/chunanyong/dm"

// DriverLinked reports whether this build contains the driver "dm".
const DriverLinked = true
