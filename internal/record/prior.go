//go:build !norecord

package record

import (
	"fmt"
	"time"

	"github.com/ptdmon/ptdmon/internal/advice"
)

// Prior is what the run knew of each stage's capacity at its end, learned
// or estimated as the live advisor did, for a new run of the same
// deployment to start from (docs/advisor.md#capacities-across-runs).
func (r *Run) Prior() (*advice.Prior, error) {
	pts, err := r.Points(time.Time{}, time.Time{})
	if err != nil {
		return nil, err
	}
	if len(pts) == 0 {
		return nil, fmt.Errorf("%s: the recording holds no point", r.dir)
	}
	caps := advice.Learn(pts, advice.Options{Window: time.Duration(r.meta.Window)})
	from, to := pts[0].Time, pts[len(pts)-1].Time
	return &advice.Prior{
		From:       fmt.Sprintf("the run recorded in %s (%s to %s)", r.dir, from.UTC().Format(time.DateTime), to.UTC().Format(time.TimeOnly)),
		Models:     r.meta.Models,
		Capacities: caps,
	}, nil
}
