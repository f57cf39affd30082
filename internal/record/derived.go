//go:build !norecord

package record

import (
	"math"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/value"

	"github.com/ptdmon/ptdmon/internal/advice"
	"github.com/ptdmon/ptdmon/internal/diagnose"
	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/metrics"
)

const (
	nameVerdict     = metrics.NameBottleneckStage
	namePoolVerdict = metrics.NamePoolBottleneckStage
	nameCapacity    = metrics.NameStageCapacity
	nameUtilisation = metrics.NameStageUtilisation
	labelPool       = "pool"
	labelBasis      = "basis"
)

// verdicts computes, off the ledger's lock, the verdict and the learned
// capacities of each tick, as the API and /metrics do, so that a recording
// opened in Prometheus or Grafana has them as series, in the shape
// Prometheus stores them when it scrapes /metrics: the class of the tick
// at 1, and a staleness marker for a class the moment it ends. The verdict
// judges the pools the points carry (docs/pools.md), each with its own
// B_request. A replay does not read them back: it computes them again from
// the points.
type verdicts struct {
	cfg      diagnose.Config
	lookback time.Duration
	recent   []ledger.Point // the points the verdict of the tick reads
	learner  *advice.Learner
	// class is the deployment's class written last, pool each pool's.
	class string
	pool  map[string]string
	// basis is the basis each capacity and utilisation series was
	// written with last, by name and stage.
	basis map[[2]string]string
}

func newVerdicts(window, interval Duration) *verdicts {
	dc := diagnose.Config{}.ForRates(time.Duration(window))
	return &verdicts{cfg: dc, lookback: dc.Lookback(time.Duration(interval)), pool: map[string]string{}, basis: map[[2]string]string{},
		learner: advice.NewLearner(advice.Options{Window: time.Duration(window)})}
}

// observe takes the tick's point and writes its verdict, each pool's and
// the capacities.
func (v *verdicts) observe(w *appender, p *ledger.Point) error {
	v.recent = append(v.recent, *p)
	cut := 0
	for cut < len(v.recent) && p.Time.Sub(v.recent[cut].Time) > v.lookback {
		cut++
	}
	if cut > 0 {
		n := copy(v.recent, v.recent[cut:])
		clear(v.recent[n:])
		v.recent = v.recent[:n]
	}
	v.learner.Observe(*p)
	ts := p.Time.UnixMilli()
	verdict := diagnose.Diagnose(v.recent, v.cfg)
	if err := v.writeClass(w, ts, "", &v.class, string(verdict.Class)); err != nil {
		return err
	}
	seen := make(map[string]bool, len(verdict.Groups))
	for _, g := range verdict.Groups {
		seen[g.Group] = true
		last := v.pool[g.Group]
		if err := v.writeClass(w, ts, g.Group, &last, string(g.Class)); err != nil {
			return err
		}
		v.pool[g.Group] = last
	}
	// A pool the verdict no longer judges ends as a target leaves /metrics.
	for pool, last := range v.pool {
		if !seen[pool] {
			if err := v.writeClass(w, ts, pool, &last, ""); err != nil {
				return err
			}
			delete(v.pool, pool)
		}
	}
	for _, c := range v.learner.Capacities() {
		for _, s := range []struct {
			name string
			v    ledger.Num
		}{{nameCapacity, c.Total}, {nameUtilisation, c.Utilisation}} {
			if err := v.writeBasis(w, ts, s.name, string(c.Stage), c.Basis, s.v); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeBasis writes a stage's capacity or utilisation with its basis, as
// /metrics exports it, and ends the series of the basis written before
// (or of a value now absent) with a staleness marker.
func (v *verdicts) writeBasis(w *appender, ts int64, name, st, basis string, x ledger.Num) error {
	k := [2]string{name, st}
	last, had := v.basis[k]
	if had && (!x.OK() || last != basis) {
		if err := w.add(seriesKey{name: name, a: st, b: last}, func() labels.Labels { return lbls(name, labelBasis, last, labelStage, st) }, ts, math.Float64frombits(value.StaleNaN)); err != nil {
			return err
		}
		delete(v.basis, k)
	}
	if !x.OK() {
		return nil
	}
	v.basis[k] = basis
	return w.add(seriesKey{name: name, a: st, b: basis}, func() labels.Labels { return lbls(name, labelBasis, basis, labelStage, st) }, ts, x.V)
}

// writeClass writes the verdict's class now (the deployment's for pool "",
// else the pool's) at 1, and, where *last was another, a staleness marker
// for that one; it sets *last to class.
func (v *verdicts) writeClass(w *appender, ts int64, pool string, last *string, class string) error {
	series := func(c string) (seriesKey, func() labels.Labels) {
		if pool == "" {
			return seriesKey{name: nameVerdict, a: c}, func() labels.Labels { return lbls(nameVerdict, labelStage, c) }
		}
		return seriesKey{name: namePoolVerdict, a: pool, b: c}, func() labels.Labels {
			return lbls(namePoolVerdict, labelPool, pool, labelStage, c)
		}
	}
	if *last != "" && *last != class {
		k, mk := series(*last)
		if err := w.add(k, mk, ts, math.Float64frombits(value.StaleNaN)); err != nil {
			return err
		}
	}
	*last = class
	if class == "" {
		return nil
	}
	k, mk := series(class)
	return w.add(k, mk, ts, 1)
}
