package locktable

// Stats counts the statements a Locker has sent since it was made, by
// operation. Every acquire, refresh, release, expire, inspect and list is
// one statement (one round trip). On a table whose release deletes the row
// (RowDeleter) Release also counts the statement that keeps the row of an
// early release and the one that deletes it later, and Expire the forced
// delete; Inspect counts the catalog read of a preset's name column. Prepare counts the prepares the Locker
// asked for; database/sql may prepare again, unseen, when a pooled
// connection first runs a statement.
type Stats struct {
	Prepare int64 `json:"prepare"`
	Acquire int64 `json:"acquire"`
	Refresh int64 `json:"refresh"`
	// RefreshBatch counts the statements that renewed many leases at
	// once (BatchRefresher); Refresh those that renewed one.
	RefreshBatch int64 `json:"refresh_batch"`
	Release      int64 `json:"release"`
	Expire       int64 `json:"expire"`
	Inspect      int64 `json:"inspect"`
	List         int64 `json:"list"`
}

// Sent is the number of statements executed, prepares excluded.
func (s Stats) Sent() int64 {
	return s.Acquire + s.Refresh + s.RefreshBatch + s.Release + s.Expire + s.Inspect + s.List
}

// Sub returns the counts of s minus those of earlier, for measuring one
// stretch of work.
func (s Stats) Sub(earlier Stats) Stats {
	return Stats{
		Prepare:      s.Prepare - earlier.Prepare,
		Acquire:      s.Acquire - earlier.Acquire,
		Refresh:      s.Refresh - earlier.Refresh,
		RefreshBatch: s.RefreshBatch - earlier.RefreshBatch,
		Release:      s.Release - earlier.Release,
		Expire:       s.Expire - earlier.Expire,
		Inspect:      s.Inspect - earlier.Inspect,
		List:         s.List - earlier.List,
	}
}

// Stats returns the statement counts so far.
func (l *Locker) Stats() Stats {
	return Stats{
		Prepare:      l.prepares.Load(),
		Acquire:      l.sent[opAcquire].Load(),
		Refresh:      l.sent[opRefresh].Load(),
		RefreshBatch: l.sent[opRefreshBatch].Load(),
		Release:      l.sent[opRelease].Load() + l.sent[opReleaseDelete].Load() + l.sent[opSweep].Load(),
		Expire:       l.sent[opExpire].Load() + l.sent[opDelete].Load(),
		Inspect:      l.sent[opInspect].Load() + l.sent[opNameColumn].Load(),
		List:         l.sent[opList].Load(),
	}
}
