package sharding

const (
	// alphaPrefix is the prefix of every label of the scheme this package follows.
	alphaPrefix = "alpha.sharding.timebertt.dev/"

	// LabelRing is the label on a shard's Lease naming the ring the shard belongs to.
	LabelRing = alphaPrefix + "controllerring"
	// LabelShardPrefix is the prefix of the label that names, on an object and its
	// children, the shard responsible for it; LabelShard adds the ring.
	LabelShardPrefix = "shard." + alphaPrefix
	// LabelDrainPrefix is the prefix of the label that asks the responsible shard to stop
	// reconciling an object and to remove both labels; LabelDrain adds the ring.
	LabelDrainPrefix = "drain." + alphaPrefix
)

// LabelShard returns the label that names the shard of ring responsible for an object.
func LabelShard(ring string) string { return LabelShardPrefix + ring }

// LabelDrain returns the label that asks the shard of ring holding an object to let it go.
func LabelDrain(ring string) string { return LabelDrainPrefix + ring }
