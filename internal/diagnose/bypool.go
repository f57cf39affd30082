package diagnose

import (
	"github.com/ptdmon/ptdmon/internal/kvsize"
	"github.com/ptdmon/ptdmon/internal/ledger"
)

// ByPool is c judging instances by pool, as the live verdict does
// (docs/pools.md): grouped by ledger.PoolOf over the targets' metadata,
// each pool's KV req/s by its own B_request (ledger.PoolRequest: its own,
// else dep while no pool has one, else absent with the reason). The
// API, the recorder and the report build their verdicts with it, so a
// recorded or reported verdict is the live one.
func (c Config) ByPool(meta map[string]ledger.TargetMeta, own map[string]kvsize.Request, dep kvsize.Request) Config {
	c.GroupOf = ledger.PoolOf(meta)
	c.BytesOf = func(pool string) (float64, string) {
		r, why := ledger.PoolRequest(pool, own, dep)
		return float64(r.Bytes), why
	}
	return c
}

// Split is w's points pool by pool as c groups them: for every group an
// instance of w is in (routers' pools included), the group's stage sums at
// every point (GroupPoints). The advisor learns each pool's capacity from
// these, live and in a report.
func (c Config) Split(w []ledger.Point) map[string][]ledger.Point {
	of := c.GroupOf
	if of == nil {
		of = ByEngine
	}
	names := map[string]bool{}
	for i := range w {
		for j := range w[i].Instances {
			names[of(&w[i].Instances[j])] = true
		}
	}
	out := make(map[string][]ledger.Point, len(names))
	for name := range names {
		out[name] = GroupPoints(w, name, of, c.BytesOf)
	}
	return out
}
