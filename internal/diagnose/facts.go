package diagnose

import (
	"math"
	"time"
)

// groupFacts are the facts a group is judged with: its own bytes per KV
// transfer against its own B_request where Config.KVPerTransfer knows them
// (docs/pools.md). With pools of different models the deployment's bytes
// per transfer mixes their B_requests: set against one of them it would
// read every pool as skewed, and one pool's prefix-cache hits would be
// blamed on the others. Otherwise the deployment's facts stand.
func groupFacts(group string, at time.Time, cfg Config, dep deployment) deployment {
	if cfg.KVPerTransfer == nil {
		return dep
	}
	perXfer, ok := cfg.KVPerTransfer(group, at)
	b, _ := cfg.bytesFor(group)
	if !ok || b <= 0 {
		return dep
	}
	return deployment{
		bytesPerXfer:    perXfer,
		bytesPerRequest: b,
		bytesSkew:       math.Abs(perXfer/b-1) > cfg.Thresholds.BytesSkew,
	}
}
