package dynamodb

// Tracked is the number of leases the backend keeps for Close and Expire.
func (b *Backend) Tracked() int {
	return b.leases.Len()
}
