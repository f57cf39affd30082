package api

import (
	"slices"

	"github.com/ptdmon/ptdmon/internal/advice"
	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/slo"
)

// poolSLO sets each pool's SLO attainment over the window W: the
// deployment's computation (advice.Attainment, docs/advisor.md#slo-attainment)
// over the histograms of the pool's own instances only, so a pool that
// misses its SLO is not averaged away by another that meets its own.
func poolSLO(l *ledger.Ledger, th slo.Thresholds, pools []Pool) error {
	if len(pools) == 0 {
		return nil
	}
	if th == (slo.Thresholds{}) {
		for i := range pools {
			pools[i].SLOAbsent = noThresholds
		}
		return nil
	}
	for i := range pools {
		b, ok := l.PoolBuckets(pools[i].Name)
		if !ok {
			pools[i].SLOAbsent = "no point yet: the first scrapes are still under way"
			continue
		}
		rep, err := advice.PoolAttainment(th, b)
		if err != nil {
			return err
		}
		pools[i].SLO = &rep
	}
	return nil
}

// requestSLO is the deployment's whole-request attainment: each pool's,
// from its own router or legs, mixed by their observations
// (advice.RequestAttainment); the pools are those of the newest point.
func requestSLO(l *ledger.Ledger, th slo.Thresholds, whole ledger.Buckets) (*slo.Attainment, error) {
	var names []string
	if p, ok := l.Latest(); ok {
		for i := range p.Instances {
			if n := p.Instances[i].Pool; !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	var pools map[string]ledger.Buckets
	if len(names) >= 2 {
		pools = make(map[string]ledger.Buckets, len(names))
		for _, n := range names {
			b, _ := l.PoolBuckets(n) // none yet: an empty pool, absent
			pools[n] = b
		}
	}
	a, err := advice.RequestAttainment(th, whole, pools)
	return &a, err
}
