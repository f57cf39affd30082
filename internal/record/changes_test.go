package record

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/value"
	"github.com/prometheus/prometheus/tsdb/chunkenc"

	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/ledger"
)

// scrapes is a Tap that keeps the scrapes a ledger takes.
type scrapes struct{ got []ledger.Scrape }

func (s *scrapes) Targets([]engine.Target)      {}
func (s *scrapes) Tick(time.Time, ledger.Point) {}
func (s *scrapes) Scrape(sc ledger.Scrape) {
	if sc.Obs != nil {
		o := *sc.Obs
		sc.Obs = &o
	}
	s.got = append(s.got, sc)
}

// changingObservation is target's read at second s of a run whose values
// change the way an engine's do, and also vanish and come back: a counter
// that grows and one that stays, a counter series gone for a while, a gauge
// that holds, changes, goes missing and reads NaN, a histogram whose low
// buckets hold while its high ones grow, that changes its buckets and
// goes missing. nil: the read fails.
func changingObservation(target string, s int) *engine.Observation {
	if target == "p0" && (s == 80 || s == 81) {
		return nil
	}
	o := &engine.Observation{Engine: engine.VLLM, Role: engine.Prefill, Model: "m", Samples: 100 + s%3}
	if target == "d0" {
		o.Role = engine.Decode
	}
	o.Counters = append(o.Counters,
		engine.CounterValue{Metric: engine.Completed, Series: 1, Value: float64(3 * s)},
		engine.CounterValue{Metric: engine.KVFailures, Series: 7, Value: 2},
		engine.CounterValue{Metric: engine.PromptTokens, Series: 3, Value: float64(1000 * (s / 15))})
	if s < 20 || s > 30 && s < 156 {
		o.Counters = append(o.Counters, engine.CounterValue{Metric: engine.Aborted, Series: 9, Value: 5})
	}
	run := engine.Running.GaugeIndex()
	if s < 40 || s > 45 {
		o.Gauges[run], o.HasGauges[run] = float64(4+s/25), true
	}
	if wait := engine.Waiting.GaugeIndex(); s >= 100 && s < 120 {
		o.Gauges[wait], o.HasGauges[wait] = math.NaN(), true
	}
	if s < 70 || s > 72 {
		les := []float64{0.1, 0.5, 1, 5, math.Inf(1)}
		if s >= 60 {
			les = []float64{0.25, 1, 10, math.Inf(1)}
		}
		h := &o.Histograms[engine.E2E.HistogramIndex()]
		h.Present, h.HasSum, h.HasCount = true, true, true
		for i, le := range les {
			c := 0.0
			if i >= 2 {
				c = float64(s * i)
			}
			h.Buckets = append(h.Buckets, engine.Bucket{UpperBound: le, Count: c})
		}
		h.Count = h.Buckets[len(h.Buckets)-1].Count
		h.Sum = 1.5 * h.Count
	}
	return o
}

// A recording of changes only gives a replay the reads the live ledger
// took, value for value, across everything that ends a carried value: a
// series gone and back, a histogram's new buckets, failed reads, a gap
// in a target's reads, the minute slices the reader decodes apart.
func TestChangesReplayAsRead(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Unix(1_800_000_000, 0)
	var live []ledger.Scrape
	values := 0
	// Two processes: the second starts 5 s after the first stopped,
	// without the series that vanished in between.
	for _, span := range [][2]int{{1, 150}, {156, 200}} {
		rec := testRecording(t, dir)
		l := ledger.New(ledger.Config{Interval: time.Second, Window: 5 * time.Second, History: 1000, Tap: rec})
		l.SetTargets([]engine.Target{{Name: "p0", Role: engine.Prefill, Engine: engine.VLLM}, {Name: "d0", Role: engine.Decode, Engine: engine.VLLM}})
		for s := span[0]; s <= span[1]; s++ {
			at := t0.Add(time.Duration(s) * time.Second)
			for _, target := range []string{"p0", "d0"} {
				if target == "d0" && s > 88 && s < 100 {
					continue // no read at all for 11 s
				}
				sc := ledger.Scrape{Target: target, Time: at.Add(-300*time.Millisecond + time.Duration(s)*time.Microsecond), Duration: 20 * time.Millisecond, Bytes: 4096}
				if o := changingObservation(target, s); o != nil {
					sc.Obs, sc.Samples = o, o.Samples
					values += samplesOf(o)
				} else {
					sc.Err = errors.New("connection refused")
				}
				l.Record(sc)
				live = append(live, sc)
			}
			l.Tick(at)
		}
		if err := rec.Close(); err != nil {
			t.Fatal(err)
		}
	}
	run, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	written, changes := recordedValues(t, run)
	if written >= values*3/4 || changes == 0 {
		t.Errorf("%d values read, %d written, %d reads of changes: the recording does not leave out what did not change", values, written, changes)
	}
	var tap scrapes
	cfg := run.LedgerConfig(1000)
	cfg.Tap = &tap
	if _, err := run.Feed(ledger.New(cfg), time.Time{}, nil); err != nil {
		t.Fatal(err)
	}
	byKey := func(ss []ledger.Scrape) map[string]string {
		out := make(map[string]string, len(ss))
		for _, s := range ss {
			out[s.Target+"@"+s.Time.Format(time.RFC3339Nano)] = readText(s)
		}
		return out
	}
	want, got := byKey(live), byKey(tap.got)
	if len(got) != len(want) {
		t.Errorf("replay fed %d reads, live %d", len(got), len(want))
	}
	bad := 0
	for k, w := range want {
		if g := got[k]; g != w && bad < 5 {
			bad++
			t.Errorf("%s:\n live   %s\n replay %s", k, w, g)
		}
	}
}

// readText is a scrape's inputs to the ledger, in a canonical order and
// with NaN comparable.
func readText(s ledger.Scrape) string {
	if s.Obs == nil {
		return fmt.Sprintf("failed %v", s.Err != nil)
	}
	o := *s.Obs
	o.Counters = slices.Clone(o.Counters)
	slices.SortFunc(o.Counters, func(a, b engine.CounterValue) int {
		if a.Metric != b.Metric {
			return int(a.Metric) - int(b.Metric)
		}
		return int(a.Series) - int(b.Series)
	})
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s %s samples=%d counters=%v", o.Engine, o.Role, o.Model, o.Samples, o.Counters)
	for i, ok := range o.HasGauges {
		if ok {
			fmt.Fprintf(&b, " g%d=%v", i, o.Gauges[i])
		}
	}
	for i, h := range o.Histograms {
		if h.Present {
			fmt.Fprintf(&b, " h%d=%v/%v/%v", i, h.Buckets, h.Sum, h.Count)
		}
	}
	return b.String()
}

// recordedValues counts the canonical values a recording holds (staleness
// markers left out) and its reads of changes.
func recordedValues(t *testing.T, run *Run) (values, changes int) {
	t.Helper()
	q, err := run.src.Querier(math.MinInt64, math.MaxInt64)
	if err != nil {
		t.Fatal(err)
	}
	ss := q.Select(context.Background(), false, nil, labels.MustNewMatcher(labels.MatchRegexp, labels.MetricName, prefixRead+".+"))
	var it chunkenc.Iterator
	for ss.Next() {
		name := ss.At().Labels().Get(labels.MetricName)
		_, canonical := readNames[name]
		it = ss.At().Iterator(it)
		for it.Next() == chunkenc.ValFloat {
			_, v := it.At()
			switch {
			case name == nameChanges:
				changes++
			case canonical && !value.IsStaleNaN(v):
				values++
			}
		}
	}
	if err := ss.Err(); err != nil {
		t.Fatal(err)
	}
	return values, changes
}
