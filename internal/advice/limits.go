package advice

import (
	"fmt"

	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/stage"
)

// LimitsFirst is the stage that will limit first as the load grows: the
// one whose capacity the current load uses most, and the arrival rate at
// which it saturates, its capacity at the instances up now
// (docs/advisor.md#the-next-limit).
type LimitsFirst struct {
	Stage             stage.Stage `json:"stage,omitempty"`
	RequestsPerSecond ledger.Num  `json:"requests_per_second"`
	Utilisation       ledger.Num  `json:"utilisation"`
	// Unsure names a stage whose capacity is only bounded and whose
	// utilisation could be the higher one.
	Unsure string `json:"unsure,omitempty"`
	Text   string `json:"text"`
}

// MarshalJSON adds the reasons of absent values.
func (l LimitsFirst) MarshalJSON() ([]byte, error) {
	type alias LimitsFirst
	return marshalWithAbsent(l, alias(l))
}

// limitsFirst ranks the stages by utilisation. A stage known only as at
// least some capacity (a utilisation at most) is named only when no stage
// has an estimate; where its bound (at most 1) exceeds the leader's it is
// said to be unsure.
func limitsFirst(caps []Capacity) LimitsFirst {
	var best, bounded *Capacity
	for i := range caps {
		c := &caps[i]
		switch {
		case !c.Utilisation.OK():
		case c.Bound == AtLeast:
			if bounded == nil || c.Utilisation.V > bounded.Utilisation.V {
				bounded = c
			}
		case !c.Total.OK():
		case best == nil || c.Utilisation.V > best.Utilisation.V:
			best = c
		}
	}
	if best == nil {
		why := "no stage's capacity is known yet"
		return LimitsFirst{RequestsPerSecond: ledger.Absent(why), Utilisation: ledger.Absent(why), Text: why}
	}
	l := LimitsFirst{Stage: best.Stage, RequestsPerSecond: best.Total, Utilisation: best.Utilisation}
	l.Text = fmt.Sprintf("%s at %.0f%% of capacity: limits first at ≈ %.3g req/s", best.Stage, 100*best.Utilisation.V, best.Total.V)
	// A bound above 1 says transfers overlap on the link, so one's speed
	// is below the link's: it says nothing of which stage limits.
	if bounded != nil && bounded.Utilisation.V > best.Utilisation.V && bounded.Utilisation.V <= 1 {
		l.Unsure = fmt.Sprintf("%s may limit first: its capacity is known only as at least %.3g req/s per instance (utilisation at most %.0f%%)",
			bounded.Stage, bounded.AtLeast.V, 100*bounded.Utilisation.V)
	}
	return l
}

// capacityRatio is the prefill instances per decode instance that carry the
// same rate: decode's capacity per instance over prefill's.
func capacityRatio(caps []Capacity) (ledger.Num, string) {
	p, d := caps[0], caps[2]
	switch {
	case !p.PerInstance.OK():
		return ledger.Absent("prefill capacity unknown: " + p.PerInstance.Why), ""
	case !d.PerInstance.OK():
		return ledger.Absent("decode capacity unknown: " + d.PerInstance.Why), ""
	case p.PerInstance.V <= 0:
		return ledger.Absent("prefill capacity is 0"), ""
	}
	r := d.PerInstance.V / p.PerInstance.V
	return ledger.Val(r), fmt.Sprintf("%.2f:1 (prefill %.3g req/s per instance, %s; decode %.3g, %s)",
		r, p.PerInstance.V, p.Basis, d.PerInstance.V, d.Basis)
}
