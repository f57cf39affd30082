package advice

import (
	"sync"
	"time"

	"github.com/ptdmon/ptdmon/internal/ledger"
)

// DefaultLookback is how far back the arrival rate is estimated.
const DefaultLookback = time.Minute

// Query is what a caller asks of the advisor.
type Query struct {
	Multiplier float64       // what-if factor on the observed arrival rate (0: 1)
	Rate       float64       // a given arrival rate, req/s (0: observed × Multiplier)
	Headroom   float64       // fraction of capacity left unused (<0: DefaultHeadroom)
	Lookback   time.Duration // of the arrival-rate estimate (0: DefaultLookback)
}

// Tracker keeps one learner over a ledger's points for the whole run (not
// only the history the ledger still holds), feeding it the points that
// arrived since the last call. It is safe for concurrent use.
type Tracker struct {
	src  *ledger.Ledger
	mu   sync.Mutex
	l    *Learner
	last time.Time
}

// NewTracker returns a tracker whose learner's window is the ledger's W,
// starting from an earlier run's capacities where prior is not nil.
func NewTracker(src *ledger.Ledger, prior *Prior) *Tracker {
	return &Tracker{src: src, l: NewLearner(Options{Window: src.Config().Window, Prior: prior})}
}

// Advise catches the learner up with the ledger and sizes the stages for q.
func (t *Tracker) Advise(q Query) (Advice, error) {
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
	for _, p := range t.src.Since(t.last) {
		t.l.Observe(p)
		t.last = p.Time
	}
	caps := t.l.Capacities()
	end := t.last
	t.mu.Unlock()
	d, err := EstimateDemand(t.src.Since(end.Add(-q.Lookback)), q.Lookback).WithTarget(q.Multiplier, q.Rate)
	if err != nil {
		return Advice{}, err
	}
	return Advise(caps, d, q.Headroom)
}
