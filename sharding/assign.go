package sharding

// Step is what the assigner does next about one object.
type Step int

// The steps, in the order an object can go through them.
const (
	// Keep: the object is where it belongs, or is waiting for its shard to let it go.
	Keep Step = iota
	// Drain: a live shard holds the object that belongs to another; ask it to let go.
	Drain
	// Assign: the object has no live shard; label it, and its children, for its own.
	Assign
)

// String is the step's name, as logs and the assigner's metrics show it.
func (s Step) String() string {
	return [...]string{"Keep", "Drain", "Assign"}[s]
}

// Decide returns the step for an object whose shard label is current (empty when it has
// none) and which is or is not draining, when the ring says it belongs to want and live
// reports whether a shard holds its Lease. want is "" when no shard is live.
//
// An object is taken from a live shard only through a drain, which that shard
// acknowledges by removing both labels once it no longer reconciles the object: never are
// two shards responsible at once. A shard that is not live reconciles nothing, so its
// objects are assigned at once.
func Decide(current string, draining bool, want string, live func(shard string) bool) Step {
	switch {
	case want == "":
		return Keep // nowhere to go
	case current != "" && live(current):
		if current == want || draining {
			return Keep // at home, or waiting for the acknowledgement
		}
		return Drain
	case current == want && !draining:
		return Keep // cannot happen: want is live
	default:
		return Assign
	}
}
