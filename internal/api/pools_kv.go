package api

import (
	"fmt"
	"time"

	"github.com/ptdmon/ptdmon/internal/diagnose"
	"github.com/ptdmon/ptdmon/internal/ledger"
)

// poolKV sets each pool's KV transfers/s from its own instances, beside its
// KV req/s, where a connector counts them; and where one transfer carries
// other than the pool's B_request (prefix-cache hits move only the
// uncached part), says that its KV req/s is bytes ÷ B_request, not a
// request count (docs/pools.md).
func poolKV(l *ledger.Ledger, th diagnose.Thresholds, p *ledger.Point, of func(ip *ledger.InstancePoint) string, pools []Pool) {
	poolOf := make(map[string]string, len(p.Instances))
	for i := range p.Instances {
		poolOf[p.Instances[i].Target] = of(&p.Instances[i])
	}
	for i := range pools {
		pool := &pools[i]
		keep := func(target string) bool { return poolOf[target] == pool.Name }
		pool.KV.Transfers = l.KVTransfersOf(keep, p.Time)
		b := float64(pool.KVRequest.Bytes)
		if per, ok := l.KVPerTransfer(keep, p.Time); ok && diagnose.BytesSkewed(per, b, th) {
			pool.KVNote = fmt.Sprintf("one KV transfer carries %.3g GB on average, %+.0f%% off B_request: KV req/s is KV bytes ÷ B_request, not a request count; transfers/s counts the transfers",
				per/1e9, 100*(per/b-1))
		}
	}
}

// kvPerTransfer is each pool's bytes per KV transfer, for the verdict to
// set against the pool's own B_request (diagnose.Config.KVPerTransfer).
func (pl pooling) kvPerTransfer(l *ledger.Ledger) func(string, time.Time) (float64, bool) {
	return func(pool string, at time.Time) (float64, bool) {
		return l.KVPerTransfer(func(target string) bool {
			return pl.of(&ledger.InstancePoint{Target: target, Engine: pl.meta[target].Engine}) == pool
		}, at)
	}
}

// targetPools is the pool of each target whose pool a label names, for
// ptd_target_pool: the generated rules of the ptdmon path read it there,
// since ptdmon's per-instance series name the model only, and otherwise
// name the pool by the model as the engines path does.
func (s *Server) targetPools() map[string]string {
	out := map[string]string{}
	for target, m := range s.Ledger.Meta() {
		if m.PoolLabelled && m.Pool != "" {
			out[target] = m.Pool
		}
	}
	return out
}
