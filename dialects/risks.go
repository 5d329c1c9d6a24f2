package dialects

// Risk is a property of a deployment under which the lock contract can
// break although every check passes: a store that evicts keys, forgets
// its data on a restart, or replicates asynchronously. Probes report them
// (Capabilities.Risks) with the reason and what to do instead.
type Risk struct {
	// ID names the risk: "eviction", "no-persistence", "async-replication", …
	ID string `json:"id"`
	// Detail says what was found and what can go wrong.
	Detail string `json:"detail"`
	// Remedy says what to do instead.
	Remedy string `json:"remedy"`
}
