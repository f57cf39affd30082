package advice

import (
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

// FromLedger learns the capacities over the ledger's whole history and
// sizes the stages for q. The learner's window is the ledger's W.
func FromLedger(l *ledger.Ledger, q Query) (Advice, error) {
	if q.Multiplier == 0 {
		q.Multiplier = 1
	}
	if q.Headroom < 0 {
		q.Headroom = DefaultHeadroom
	}
	if q.Lookback <= 0 {
		q.Lookback = DefaultLookback
	}
	pts := l.Since(time.Time{})
	caps := Learn(pts, Options{Window: l.Config().Window})
	d, err := EstimateDemand(pts, q.Lookback).WithTarget(q.Multiplier, q.Rate)
	if err != nil {
		return Advice{}, err
	}
	return Advise(caps, d, q.Headroom)
}
