package sharding

import "time"

// SetResweep sets how often the shard that assigns sweeps every object again, for the
// shards started after it, and returns what restores it.
func SetResweep(d time.Duration) (restore func()) {
	old := resweep
	resweep = d
	return func() { resweep = old }
}
