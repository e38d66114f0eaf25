package reconciletest

import (
	"context"
	"sync"
)

// Warnings records the warnings the API server returns to a client, such as those of a
// validating webhook, so that a test can assert them. Set it as the client's
// rest.Config.WarningHandlerWithContext; it is safe for concurrent use.
type Warnings struct {
	mu   sync.Mutex
	seen []string
}

// HandleWarningHeaderWithContext records one warning; client-go calls it.
func (w *Warnings) HandleWarningHeaderWithContext(_ context.Context, _ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seen = append(w.seen, text)
}

// Take returns the warnings recorded since the last Take, oldest first, and forgets them.
func (w *Warnings) Take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	seen := w.seen
	w.seen = nil
	return seen
}
