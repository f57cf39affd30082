package api

import (
	"slices"
	"sort"

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
		req, err := slo.AttainRequest(th, b.Request)
		if err != nil {
			return err
		}
		rep.Request = &req
		pools[i].SLO = &rep
	}
	return nil
}

// requestSLO is the deployment's whole-request attainment: each pool's,
// from its own router or legs (a prefill leg of one pool never adds to a
// decode leg of another), mixed by their observations. With one pool it
// is that pool's.
func requestSLO(l *ledger.Ledger, th slo.Thresholds, whole ledger.Buckets) (*slo.Attainment, error) {
	var names []string
	if p, ok := l.Latest(); ok {
		for i := range p.Instances {
			if n := p.Instances[i].Pool; !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	if len(names) < 2 {
		a, err := slo.AttainRequest(th, whole.Request)
		return &a, err
	}
	sort.Strings(names)
	parts := make([]slo.Attainment, 0, len(names))
	for _, n := range names {
		b, ok := l.PoolBuckets(n)
		if !ok {
			b = ledger.Buckets{}
		}
		a, err := slo.AttainRequest(th, b.Request)
		if err != nil {
			return nil, err
		}
		parts = append(parts, a)
	}
	mixed := slo.Mix(names, parts)
	return &mixed, nil
}
