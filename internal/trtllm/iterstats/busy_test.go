package iterstats

import (
	"math"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/engine"
)

// The engine's busy seconds are each record's loop time (hostStepTimeMS,
// else iterLatencyMS, halved in overlap mode) times the iterations it
// stands for (those since the previous record, where the engine writes one
// every few iterations), added up across polls; absent until a record
// carries a time.
func TestBusySeconds(t *testing.T) {
	type it struct {
		iter          int
		host, latency float64 // ms; < 0: not in the record
		mode          string
	}
	f := func(name string, polls [][]it, want float64) {
		t.Run(name, func(t *testing.T) {
			r, _ := newTestReader(Options{})
			var o *engine.Observation
			seq := 0
			for p, recs := range polls {
				var rs []rec
				for _, x := range recs {
					seq++
					row := rec{"timestamp": hostStamp(t0.Add(time.Duration(seq) * time.Millisecond)), "iter": x.iter, "statsSequence": seq, "numActiveRequests": 1}
					if x.host >= 0 {
						row["hostStepTimeMS"] = x.host
					}
					if x.latency >= 0 {
						row["iterLatencyMS"] = x.latency
					}
					if x.mode != "" {
						row["schedulerMode"] = x.mode
					}
					rs = append(rs, row)
				}
				o, _ = mustRead(t, r, body(t, rs...), t0.Add(time.Duration(p+1)*time.Second))
			}
			got, ok := o.CounterSum(engine.BusySeconds)
			switch {
			case want < 0 && ok:
				t.Errorf("busy seconds %v, want absent", got)
			case want >= 0 && (!ok || math.Abs(got-want) > 1e-9):
				t.Errorf("busy seconds %v (present %v), want %v", got, ok, want)
			}
		})
	}
	f("every iteration", [][]it{{{1, -1, 20, ""}, {2, -1, 30, ""}}, {{3, -1, 10, ""}}}, 0.060)
	f("host step first", [][]it{{{1, 12, 20, ""}, {2, 8, 30, ""}}}, 0.020)
	f("overlap halves the latency", [][]it{{{1, -1, 20, "overlap"}, {2, -1, 30, "overlap"}}}, 0.025)
	f("a record every third iteration", [][]it{{{3, -1, 10, ""}, {6, -1, 10, ""}}, {{9, -1, 20, ""}}}, 0.010+0.030+0.060)
	f("iter starts over", [][]it{{{500, -1, 10, ""}}, {{1, -1, 10, ""}, {2, -1, 10, ""}}}, 0.030)
	f("no time in the records", [][]it{{{1, -1, -1, ""}}}, -1)
}
