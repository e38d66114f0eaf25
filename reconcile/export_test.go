package reconcile

// Bereaved returns how many owners are noted for a fresh read, for the tests.
func Bereaved() int {
	bereaved.mu.Lock()
	defer bereaved.mu.Unlock()
	return len(bereaved.owners)
}
