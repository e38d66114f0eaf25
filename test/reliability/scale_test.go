package reliability

import (
	"testing"
	"time"
)

func TestAThousandObjectsOfEachKindConvergeWhileTenPercentOfWritesFail(t *testing.T) {
	n, limit := 30, 5*time.Minute
	if *full {
		n, limit = 1000, 30*time.Minute
	}
	convergeDespiteFaults(t, n, limit)
}
