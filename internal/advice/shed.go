package advice

import (
	"time"

	"github.com/ptdmon/ptdmon/internal/ledger"
)

// BasisShed is added to the inferred basis where the pools shed load before
// the engine: requests turned away never reach prefill, so conservation on
// the prefill side misses them (docs/design.md#load-shed-before-the-engine).
const BasisShed = " + the load shed before the engine"

// shedMean is the mean over the points after from of the load the points'
// pools shed before the engine (every pool's, added), and whether any
// point counts some.
func shedMean(points []ledger.Point, from time.Time) (float64, bool) {
	var s stat
	for _, p := range points {
		if !p.Time.After(from) {
			continue
		}
		v, n := 0.0, 0
		for k := range p.Pools {
			if r := p.Pools[k].Failures.Shed.PerSecond; r.OK() {
				v += r.V
				n++
			}
		}
		if n > 0 {
			s.add(v)
		}
	}
	return s.mean, s.n > 0
}
