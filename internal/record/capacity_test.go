package record

import (
	"context"
	"math"
	"testing"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/value"
	"github.com/prometheus/prometheus/tsdb/chunkenc"

	"github.com/ptdmon/ptdmon/internal/advice"
	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/sim"
)

// The recording keeps each stage's capacity and utilisation as /metrics
// exports them, with their basis: tick by tick the values a learner fed
// the live points gives, one basis per stage at a time, and the series of
// a basis left behind ended with a staleness marker (prefill's estimate
// from its busy time gives way to its capacity learned saturated).
func TestRecordedCapacityIsTheLiveOne(t *testing.T) {
	sc, err := sim.LoadScenario("prefill-bound")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	live := advice.NewLearner(advice.Options{Window: 5e9})
	want := map[int64][]advice.Capacity{}
	pts := liveRunOf(t, dir, sc, 90, nil, (*Recorder).Close, func(l *ledger.Ledger) {
		p, _ := l.Latest()
		live.Observe(p)
		want[p.Time.UnixMilli()] = live.Capacities()
	})
	run, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	for _, name := range []string{nameCapacity, nameUtilisation} {
		got, stale := recordedByBasis(t, run, name)
		bases := map[string]bool{}
		for i, p := range pts {
			ts := p.Time.UnixMilli()
			for _, c := range want[ts] {
				v := c.Total
				if name == nameUtilisation {
					v = c.Utilisation
				}
				rec := got[ts][string(c.Stage)]
				switch {
				case !v.OK() && len(rec) > 0:
					t.Errorf("%s tick %d %s: recorded %v, live absent (%s)", name, i, c.Stage, rec, v.Why)
				case v.OK() && (len(rec) != 1 || rec[c.Basis] != v.V):
					t.Errorf("%s tick %d %s: recorded %v, live %v (%s)", name, i, c.Stage, rec, v.V, c.Basis)
				}
				if v.OK() {
					bases[string(c.Stage)+"/"+c.Basis] = true
				}
			}
		}
		if !bases["prefill/busy"] || !bases["prefill/saturated"] || !stale["prefill/busy"] {
			t.Errorf("%s: bases seen %v, ended %v: want prefill's busy estimate ended by its saturated capacity", name, bases, stale)
		}
	}
}

// recordedByBasis reads a series of the recording: each tick's value by
// stage and basis, and the stage/basis series ended by a staleness marker.
func recordedByBasis(t *testing.T, run *Run, name string) (map[int64]map[string]map[string]float64, map[string]bool) {
	t.Helper()
	q, err := run.src.Querier(math.MinInt64, math.MaxInt64)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	out := map[int64]map[string]map[string]float64{}
	stale := map[string]bool{}
	ss := q.Select(context.Background(), false, nil, labels.MustNewMatcher(labels.MatchEqual, labels.MetricName, name))
	for ss.Next() {
		ls := ss.At().Labels()
		st, basis := ls.Get(labelStage), ls.Get(labelBasis)
		it := ss.At().Iterator(nil)
		for it.Next() == chunkenc.ValFloat {
			ts, v := it.At()
			if value.IsStaleNaN(v) {
				stale[st+"/"+basis] = true
				continue
			}
			if out[ts] == nil {
				out[ts] = map[string]map[string]float64{}
			}
			if out[ts][st] == nil {
				out[ts][st] = map[string]float64{}
			}
			out[ts][st][basis] = v
		}
	}
	if err := ss.Err(); err != nil {
		t.Fatal(err)
	}
	return out, stale
}
