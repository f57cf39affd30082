package advice

import (
	"sort"
	"sync"
	"time"

	"github.com/ptdmon/ptdmon/internal/ledger"
)

// PoolAdvice is the advice of one pool: its own capacities, learned while
// its own stages were saturated, and its own arrival rate.
type PoolAdvice struct {
	Pool   string `json:"pool"`
	Advice Advice `json:"advice"`
}

// PoolTracker keeps one learner per pool over a ledger's points, as Tracker
// does for the deployment: a pool's capacity is learned from its own
// instances only, so that two pools limited by different stages are sized
// each for its own limit. It is safe for concurrent use.
type PoolTracker struct {
	src  *ledger.Ledger
	mu   sync.Mutex
	ls   map[string]*Learner
	last time.Time
}

// NewPoolTracker returns a tracker of src's pools (ledger.SplitPools).
func NewPoolTracker(src *ledger.Ledger) *PoolTracker {
	return &PoolTracker{src: src, ls: map[string]*Learner{}}
}

// Advise catches every pool's learner up with the ledger and sizes each
// pool for q, its target rate q's multiple of the pool's own arrival rate
// (q.Rate, a deployment's rate, is not split among pools: it is ignored).
func (t *PoolTracker) Advise(q Query) ([]PoolAdvice, error) {
	if q.Multiplier == 0 {
		q.Multiplier = 1
	}
	if q.Headroom < 0 {
		q.Headroom = DefaultHeadroom
	}
	if q.Lookback <= 0 {
		q.Lookback = DefaultLookback
	}
	t.mu.Lock()
	if fresh := t.src.Since(t.last); len(fresh) > 0 {
		for pool, pts := range ledger.SplitPools(fresh) {
			l := t.ls[pool]
			if l == nil {
				l = NewLearner(Options{Window: t.src.Config().Window})
				t.ls[pool] = l
			}
			for _, p := range pts {
				l.Observe(p)
			}
		}
		t.last = fresh[len(fresh)-1].Time
	}
	caps := make(map[string][]Capacity, len(t.ls))
	for pool, l := range t.ls {
		caps[pool] = l.Capacities()
	}
	end := t.last
	t.mu.Unlock()
	recent := ledger.SplitPools(t.src.Since(end.Add(-q.Lookback)))
	names := make([]string, 0, len(recent))
	for pool := range recent {
		if caps[pool] != nil {
			names = append(names, pool)
		}
	}
	sort.Strings(names)
	out := make([]PoolAdvice, 0, len(names))
	for _, pool := range names {
		d, err := EstimateDemand(recent[pool], q.Lookback).WithTarget(q.Multiplier, 0)
		if err != nil {
			return nil, err
		}
		a, err := Advise(caps[pool], d, q.Headroom)
		if err != nil {
			return nil, err
		}
		out = append(out, PoolAdvice{Pool: pool, Advice: a})
	}
	return out, nil
}
