//go:build !norecord

package record

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/ptdmon/ptdmon/internal/ledger"
)

// maxLatencySamples bounds the samples a span's histogram increases hold
// in memory (the ledger keeps every sample inside its window): beyond it,
// SLO attainment is absent rather than the process large.
const maxLatencySamples = 2_000_000

// Latencies are the latency histograms' increases from from to to, as the
// live ledger read its own window at the tick that ends it: the recording
// fed to a ledger whose window W is the span, up to that tick. Pools are
// each pool's own (ledger.PoolBuckets), by the pools of the point at to,
// when it has two or more: the whole request's SLO of a deployment of
// several pools is each pool's, mixed (advice.RequestAttainment).
func (r *Run) Latencies(from, to time.Time) (ledger.Buckets, map[string]ledger.Buckets, error) {
	cfg := r.LedgerConfig(1)
	cfg.Window = to.Sub(from)
	if cfg.Window <= 0 {
		return ledger.Buckets{}, nil, errors.New("an empty span")
	}
	if n := int(cfg.Window/max(cfg.Interval, time.Millisecond)) * max(len(r.meta.Targets), 1); n > maxLatencySamples {
		return ledger.Buckets{}, nil, fmt.Errorf("%v of %d targets holds more than %d histogram samples", cfg.Window, len(r.meta.Targets), maxLatencySamples)
	}
	l := ledger.New(cfg)
	if _, _, err := feed(r.src, r.meta, r.texts, l, to, time.Time{}, nil, true); err != nil {
		return ledger.Buckets{}, nil, err
	}
	whole, ok := l.Buckets()
	if !ok {
		return ledger.Buckets{}, nil, errors.New("no recorded tick up to the span's end")
	}
	p, _ := l.Latest()
	var names []string
	for i := range p.Instances {
		if n := p.Instances[i].Pool; !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	if len(names) < 2 {
		return whole, nil, nil
	}
	pools := make(map[string]ledger.Buckets, len(names))
	for _, n := range names {
		pools[n], _ = l.PoolBuckets(n)
	}
	return whole, pools, nil
}
