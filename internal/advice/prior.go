package advice

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/stage"
)

// BasisEarlierRun is the basis of a capacity taken from an earlier run of
// the same deployment (Prior): it stands until this run learns or estimates
// its own.
const BasisEarlierRun = "earlier_run"

// Prior is what an earlier run of the same deployment knew of each stage's
// capacity when it ended (docs/advisor.md#capacities-across-runs): a new
// run starts from it and says where it came from.
type Prior struct {
	// From names the run ("recording /data/run-12, 14:02–14:31").
	From string
	// Models are the models the run served; the prior is dropped the
	// moment this run's points name other models.
	Models []string
	// Capacities are the run's, one per stage in stage.All's order.
	Capacities []Capacity
}

// prior is a learner's view of a Prior: the stages' capacities it still
// stands for, and why it was dropped.
type prior struct {
	p       *Prior
	dropped string
}

// check drops the prior when p serves a model the earlier run did not.
func (pr *prior) check(p ledger.Point) {
	if pr.p == nil || pr.dropped != "" || len(pr.p.Models) == 0 {
		return
	}
	for _, pp := range p.Pools {
		if pp.Model != "" && !slices.Contains(pr.p.Models, pp.Model) {
			pr.dropped = fmt.Sprintf("%s served %s, this run serves %s", pr.p.From, strings.Join(pr.p.Models, ", "), pp.Model)
			return
		}
	}
}

// capacity is the earlier run's capacity of stage i, and false where it has
// none, or none this run should take: the prior was dropped, or this run
// has an estimate of its own and the earlier one was no more than that.
func (pr *prior) capacity(i int, haveEstimate bool) (Capacity, bool) {
	if pr.p == nil || pr.dropped != "" || i >= len(pr.p.Capacities) {
		return Capacity{}, false
	}
	c := pr.p.Capacities[i]
	if c.Stage != stage.All[i] || !c.PerInstance.OK() {
		return Capacity{}, false
	}
	if haveEstimate && c.Basis != BasisSaturated {
		return Capacity{}, false
	}
	return c, true
}
