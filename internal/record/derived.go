//go:build !norecord

package record

import (
	"time"

	"github.com/prometheus/prometheus/model/labels"

	"github.com/ptdmon/ptdmon/internal/advice"
	"github.com/ptdmon/ptdmon/internal/diagnose"
	"github.com/ptdmon/ptdmon/internal/kvsize"
	"github.com/ptdmon/ptdmon/internal/ledger"
)

const (
	nameVerdict     = "ptd_bottleneck_stage"
	namePoolVerdict = "ptd_pool_bottleneck_stage"
	nameCapacity    = "ptd_stage_capacity_requests_per_second"
	labelPool       = "pool"
)

// verdicts computes, off the ledger's lock, the verdict and the learned
// capacities of each tick, as the API and /metrics do, so that a recording
// opened in Prometheus or Grafana has them as series. The verdict groups
// instances into pools as the API does (docs/pools.md): by ledger.PoolOf
// over the targets' metadata at the tick, each pool with the B_request
// ledger.PoolRequest gives it. A replay does not read them back: it
// computes them again from the points.
type verdicts struct {
	own map[string]kvsize.Request // the pools' own B_request
	dep kvsize.Request            // the deployment's
	cfg diagnose.Config
	// stream keeps the recent points and gives Diagnose's verdict over
	// them without summing every group at every point of them each tick.
	stream  *diagnose.Stream
	learner *advice.Learner
}

func newVerdicts(m Meta) *verdicts {
	dc := diagnose.Config{Window: diagnose.DefaultWindow, BytesPerRequest: float64(m.KVRequest.Bytes)}
	if w := time.Duration(m.Window); dc.Window < w {
		dc.Window = w
	}
	// Until the ledger says what the targets are, no instance has a
	// pool: each is grouped by its engine kind, as PoolOf does.
	dc = dc.ByPool(nil, m.PoolRequests, m.KVRequest)
	// The points the API diagnoses from: two verdict windows and one
	// interval (internal/api's history).
	keep := 2*dc.Window + time.Duration(m.Interval)
	return &verdicts{own: m.PoolRequests, dep: m.KVRequest, cfg: dc, stream: diagnose.NewStream(dc, keep), learner: advice.NewLearner(advice.Options{Window: time.Duration(m.Window)})}
}

// observe takes the tick's point, and the targets' metadata when it
// changed, and writes its verdict, each pool's and the capacities.
func (v *verdicts) observe(w *appender, p *ledger.Point, meta map[string]ledger.TargetMeta) error {
	if meta != nil {
		v.cfg = v.cfg.ByPool(meta, v.own, v.dep)
		v.stream.SetConfig(v.cfg)
	}
	v.stream.Observe(*p)
	v.learner.Observe(*p)
	ts := p.Time.UnixMilli()
	verdict := v.stream.Verdict()
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
	// Each pool's as ptd_pool_bottleneck_stage, every class of it written
	// (0 or 1), so a query between two ticks never finds a stale 1.
	for _, g := range verdict.Groups {
		pool := g.Group
		for _, c := range diagnose.Classes {
			val := 0.0
			if c == g.Class {
				val = 1
			}
			class := string(c)
			if err := w.add(seriesKey{name: namePoolVerdict, a: pool, b: class}, func() labels.Labels {
				return lbls(namePoolVerdict, labelPool, pool, labelStage, class)
			}, ts, val); err != nil {
				return err
			}
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
