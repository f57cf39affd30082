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
		bytesSkew:       BytesSkewed(perXfer, b, cfg.Thresholds),
	}
}

// BytesSkewed says whether one KV transfer's mean bytes are further from
// B_request than th.BytesSkew (default 10%) allows: KV bytes ÷ B_request
// is then not a request count (prefix-cache hits, partial transfers).
func BytesSkewed(perXfer, bytesPerRequest float64, th Thresholds) bool {
	th = Config{Thresholds: th}.withDefaults().Thresholds
	return bytesPerRequest > 0 && perXfer > 0 && math.Abs(perXfer/bytesPerRequest-1) > th.BytesSkew
}
