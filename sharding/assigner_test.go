package sharding

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
)

func TestASessionIsSpentOnceABatchOfThousandsHasBeenAssigned(t *testing.T) {
	tests := []struct {
		name   string
		counts []int64 // objects its cache took (positive) and let go (negative), in turn
		queued int
		spent  bool
	}{
		{"empty", nil, 0, false},
		{"a few held and gone", []int64{10, -10}, 0, false},
		{"a batch still held", []int64{spentPeak, 2 * spentPeak}, 0, false},
		{"a batch mostly gone, a sixteenth left", []int64{2 * spentPeak, -2*spentPeak + spentPeak/8}, 0, true},
		{"a batch mostly gone, more than a sixteenth left", []int64{2 * spentPeak, -2*spentPeak + spentPeak/8 + 1}, 0, false},
		{"a batch gone, then a few new", []int64{spentPeak, -spentPeak, 5}, 0, true},
		{"a batch gone, objects still queued", []int64{spentPeak, -spentPeak}, 1, false},
		{"below the batch size, all gone", []int64{spentPeak - 1, -(spentPeak - 1)}, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := session{queue: workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[types.NamespacedName]())}
			defer s.queue.ShutDown()
			for _, n := range tt.counts {
				s.count(n)
			}
			for i := range tt.queued {
				s.queue.Add(types.NamespacedName{Name: fmt.Sprint(i)})
			}
			if got := s.spent(); got != tt.spent {
				t.Errorf("spent() = %v after %v with %d queued (held %d, peak %d), want %v", got, tt.counts, tt.queued, s.held.Load(), s.peak.Load(), tt.spent)
			}
		})
	}
}
