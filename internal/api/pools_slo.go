package api

import (
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
		rep, err := advice.Attainment(th, b)
		if err != nil {
			return err
		}
		pools[i].SLO = &rep
	}
	return nil
}
