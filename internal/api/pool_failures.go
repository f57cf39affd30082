package api

import "github.com/ptdmon/ptdmon/internal/ledger"

// whyNoPoolValues is the reason of a pool's values the ledger computed
// none of at the point (a point from before the pool's targets were read).
const whyNoPoolValues = "the ledger has no values of this pool at this point"

// poolFailures is pool name's KV failures and TTFT phases at p.
func poolFailures(p *ledger.Point, name string) (*ledger.Failures, *ledger.Phases) {
	f, ph := ledger.AbsentFailures(whyNoPoolValues), ledger.AbsentPhases(whyNoPoolValues)
	if pp, ok := p.Pool(name); ok {
		f, ph = pp.Failures, pp.Phases
	}
	return &f, &ph
}
