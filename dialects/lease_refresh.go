package dialects

// RefreshFailure is implemented by leases that remember why their last
// Refresh failed while the lease still runs (the table strategy's lease):
// the database's own error, such as `relation "schedlock" does not exist`
// or a refused connection. A successful Refresh forgets it.
type RefreshFailure interface {
	LastRefreshError() error
}

// LastRefreshError returns the error of lease's last Refresh when it failed
// and no Refresh has succeeded since; nil otherwise, and for leases that do
// not remember (see RefreshFailure).
func LastRefreshError(lease Lease) error {
	if r, ok := lease.(RefreshFailure); ok {
		return r.LastRefreshError()
	}
	return nil
}
