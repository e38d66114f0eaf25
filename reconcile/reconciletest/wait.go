package reconciletest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// Eventually polls cond until it returns nil, and fails the test with the last error it
// returned if that takes more than two minutes. It polls often and waits long: a test
// should be fast when the machine is idle and still pass when it is not. Call it from
// the test's goroutine. It stops at once when the test stops for a refusal of the
// operator (Env.Run), even when cond reads with a client of its own, and when a manager
// StartManager started for t has failed.
func Eventually(t testing.TB, cond func(ctx context.Context) error) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		if message, ok := stoppedFor(t); ok {
			return false, fmt.Errorf("reconciletest: the test stops: %s", message)
		}
		err := cond(ctx)
		if ctx.Err() == nil {
			last = err // an attempt cut short by the deadline says nothing about cond
		}
		if errors.Is(err, errTestStopped) {
			return false, err // the operator was refused a request: waiting is over
		}
		return err == nil, nil
	})
	if message, ok := stoppedFor(t); ok {
		t.Fatalf("reconciletest: the test stops, waiting is vain: %s (reported above)", message)
	}
	if err != nil {
		t.Fatalf("%v; the last attempt said: %v", err, last)
	}
}
