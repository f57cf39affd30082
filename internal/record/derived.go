package record

import (
	"time"

	"github.com/prometheus/prometheus/model/labels"

	"github.com/ptdmon/ptdmon/internal/advice"
	"github.com/ptdmon/ptdmon/internal/diagnose"
	"github.com/ptdmon/ptdmon/internal/ledger"
)

const (
	nameVerdict  = "ptd_bottleneck_stage"
	nameCapacity = "ptd_stage_capacity_requests_per_second"
)

// verdicts computes, off the ledger's lock, the verdict and the learned
// capacities of each tick, as the API and /metrics do, so that a recording
// opened in Prometheus or Grafana has them as series. A replay does not
// read them back: it computes them again from the points.
type verdicts struct {
	cfg     diagnose.Config
	keep    time.Duration
	recent  []ledger.Point
	learner *advice.Learner
}

func newVerdicts(m Meta) *verdicts {
	dc := diagnose.Config{Window: diagnose.DefaultWindow, BytesPerRequest: float64(m.KVRequest.Bytes)}
	if w := time.Duration(m.Window); dc.Window < w {
		dc.Window = w
	}
	// The points the API diagnoses from: two verdict windows and one
	// interval (internal/api's history).
	return &verdicts{cfg: dc, keep: 2*dc.Window + time.Duration(m.Interval), learner: advice.NewLearner(advice.Options{Window: time.Duration(m.Window)})}
}

// observe takes the tick's point and writes its verdict and capacities.
func (v *verdicts) observe(w *appender, p *ledger.Point) error {
	v.recent = append(v.recent, *p)
	cut := 0
	for cut < len(v.recent) && !v.recent[cut].Time.After(p.Time.Add(-v.keep)) {
		cut++
	}
	v.recent = append(v.recent[:0], v.recent[cut:]...)
	v.learner.Observe(*p)
	ts := p.Time.UnixMilli()
	verdict := diagnose.Diagnose(v.recent, v.cfg)
	for _, c := range diagnose.Classes {
		val := 0.0
		if c == verdict.Class {
			val = 1
		}
		class := string(c)
		if err := w.add(seriesKey{name: nameVerdict, a: class}, func() labels.Labels { return lbls(nameVerdict, labelStage, class) }, ts, val); err != nil {
			return err
		}
	}
	for _, c := range v.learner.Capacities() {
		if !c.Total.OK() {
			continue
		}
		st := string(c.Stage)
		if err := w.add(seriesKey{name: nameCapacity, a: st}, func() labels.Labels { return lbls(nameCapacity, labelStage, st) }, ts, c.Total.V); err != nil {
			return err
		}
	}
	return nil
}
