package dameng

// DriverModule is the Go module of the driver "dm".
const DriverModule = "gitee.com/chunanyong/dm"

// DriverHint says how to build schedlock with the Dameng driver, for
// messages about a dm:// DSN in a build without it (DriverLinked false).
// v1.8.13 is the driver released with DM 8.1.3.62; pick the release that
// matches the server (v1.8.x is cut from DM 8.1.x.x).
const DriverHint = "this build has no Dameng driver: rebuild with `go get " + DriverModule + "@v1.8.13 && go build -tags dameng` (see docs/dialects/dameng.md)"
