package diagnose

import (
	"math"

	"github.com/ptdmon/ptdmon/internal/ledger"
)

// transferFacts are what a group's KV bytes say beside its rates: the mean
// payload of one KV transfer (bytes ÷ transfers over the window), the
// B_request it was set against, and whether it is further from it than
// Thresholds.BytesSkew.
type transferFacts struct {
	bytesPerXfer    float64
	bytesSkew       bool
	bytesPerRequest float64
}

// kvFacts are the transfer facts of a group over its window w: its own
// bytes per transfer against its own B_request (docs/pools.md), both read
// from its pool's points. Judged against another pool's B_request, or a
// mixture of pools against one of them, every pool would read as skewed,
// and one pool's prefix-cache hits would be blamed on the others. Points
// without a pool (a deployment judged whole) have none.
func kvFacts(w []ledger.Point, th Thresholds) transferFacts {
	var f transferFacts
	var bytes, xfers, perRequest float64
	for i := range w {
		if len(w[i].Pools) == 1 {
			perRequest = float64(w[i].Pools[0].KVRequest.Bytes)
		}
		k := &w[i].KV
		if k.BytesWindow.OK() && k.Transfers.OK() && k.Transfers.V > 0 {
			bytes += k.BytesWindow.V
			xfers += k.Transfers.V
		}
	}
	if xfers <= 0 || perRequest <= 0 {
		return f
	}
	f.bytesPerXfer, f.bytesPerRequest = bytes/xfers, perRequest
	f.bytesSkew = BytesSkewed(f.bytesPerXfer, perRequest, th)
	return f
}

// BytesSkewed says whether one KV transfer's mean bytes are further from
// B_request than th.BytesSkew (default 10%) allows: KV bytes ÷ B_request
// is then not a request count (prefix-cache hits, partial transfers).
func BytesSkewed(perXfer, bytesPerRequest float64, th Thresholds) bool {
	th = Config{Thresholds: th}.withDefaults().Thresholds
	return bytesPerRequest > 0 && perXfer > 0 && math.Abs(perXfer/bytesPerRequest-1) > th.BytesSkew
}
