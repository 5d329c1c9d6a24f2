package sqlkit

// WatcherRounds is the sum of the loop turns of the watchers of l's
// routed lock connections and of those
// busy with a server-side wait.
func (l *SessionLocker) WatcherRounds() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	var n int64
	for _, c := range l.conns {
		n += c.rounds.Load()
	}
	for c := range l.waiting {
		n += c.rounds.Load()
	}
	return n
}
