// Package simtest drives the simulator in simulated time through the real
// engine adapters into a ledger, for tests of what reads the ledger or
// taps its inputs: the one harness from the simulator to the ledger.
package simtest

import (
	"fmt"
	_ "github.com/ptdmon/ptdmon/internal/trtllm/iterstats" // the iteration statistics' reader
	"time"

	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/kvsize"
	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/sim"
)

// Epoch is the wall-clock time of simulated time 0.
var Epoch = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

// Run simulates sc for dur, scraping every instance once a simulated
// second, and returns the ledger (W = 5 s, history covering the run), its
// points and the model. No wall clock is involved.
func Run(sc sim.Scenario, seed int64, dur time.Duration) (*ledger.Ledger, []ledger.Point, *sim.Model, error) {
	r, err := RunHistograms(sc, seed, dur)
	if err != nil {
		return nil, nil, nil, err
	}
	return r.Ledger, r.Points, r.Model, nil
}

// Result is a run with every instance's histograms at every second.
type Result struct {
	Ledger    *ledger.Ledger
	Points    []ledger.Point
	Model     *sim.Model
	Instances []sim.InstanceInfo
	// hists[second-1][instance][histogram index]
	hists [][][engine.NumHistograms]engine.Histogram
}

// Increase returns the increase of instance i's histogram m between the
// scrapes at simulated seconds from and to (1 ≤ from < to ≤ the run's
// length), and false when the instance did not export it at both.
func (r *Result) Increase(i int, m engine.Metric, from, to int) (engine.Histogram, bool) {
	if from < 1 || to > len(r.hists) || from >= to {
		return engine.Histogram{}, false
	}
	a, b := r.hists[from-1][i][m.HistogramIndex()], r.hists[to-1][i][m.HistogramIndex()]
	if !a.Present || !b.Present || len(a.Buckets) != len(b.Buckets) {
		return engine.Histogram{}, false
	}
	out := engine.Histogram{Present: true, Sum: b.Sum - a.Sum, Count: b.Count - a.Count, Buckets: make([]engine.Bucket, len(b.Buckets))}
	for k := range b.Buckets {
		out.Buckets[k] = engine.Bucket{UpperBound: b.Buckets[k].UpperBound, Count: b.Buckets[k].Count - a.Buckets[k].Count}
	}
	return out, true
}

// RunHistograms is Run, keeping every instance's histograms.
func RunHistograms(sc sim.Scenario, seed int64, dur time.Duration) (*Result, error) {
	return RunWith(sc, seed, dur, Options{})
}

// Options change a run.
type Options struct {
	// History is the ledger's number of points (0: the whole run).
	History int
	// OnTick, if set, is called with the ledger after every tick.
	OnTick func(*ledger.Ledger)
	// PoolRequests are the pools' own B_request (docs/pools.md).
	PoolRequests map[string]kvsize.Request
	// Tap, if set, sees the ledger's inputs (ledger.Config.Tap).
	Tap ledger.Tap
	// Start, if set, is called with the new ledger before it is given its
	// targets (a recorder's resume).
	Start func(*ledger.Ledger) error
	// Read, if set, is called with each scrape of simulated second s and
	// instance i before the ledger takes it: it may change it (its time,
	// a failure in place of the read) and says when the ledger takes it.
	Read func(s, i int, sc *ledger.Scrape) When
	// TickAt, if set, is the time of second s's tick, at the end of
	// simulated time at (default: that time).
	TickAt func(s int, at time.Time) time.Time
	// Targets, if set, may change the targets (their labels, say) before
	// the ledger is given them.
	Targets func([]engine.Target)
	// Model, if set, is called with the model before the run starts (to
	// hook its completions, sim.Model.OnComplete, or read its state as the
	// run goes).
	Model func(*sim.Model)
	// IterationStats reads the TensorRT-LLM instances' JSON iteration
	// statistics, as a target with iteration_stats does, rather than their
	// Prometheus exposition.
	IterationStats bool
}

// When the ledger takes a scrape.
type When int

const (
	// BeforeTick: at its second, before that second's tick.
	BeforeTick When = iota
	// AfterTick: right after that second's tick, as a slow scrape.
	AfterTick
)

// RunWith is RunHistograms with options.
func RunWith(sc sim.Scenario, seed int64, dur time.Duration, o Options) (*Result, error) {
	m, err := sim.NewModel(sc, seed, Epoch)
	if err != nil {
		return nil, err
	}
	if o.Model != nil {
		o.Model(m)
	}
	if o.History <= 0 {
		o.History = int(dur/time.Second) + 1
	}
	l := ledger.New(ledger.Config{Interval: time.Second, Window: 5 * time.Second, History: o.History,
		KVRequest:    kvsize.Request{Bytes: sc.KVBytesPerRequest, Basis: kvsize.BasisSimulator},
		PoolRequests: o.PoolRequests, Tap: o.Tap})
	if o.Start != nil {
		if err := o.Start(l); err != nil {
			return nil, err
		}
	}
	insts := m.Instances()
	infos := make([]engine.Target, len(insts))
	readers := make([]engine.BodyReader, len(insts))
	for i, in := range insts {
		role, _ := engine.ParseRole(in.Role)
		eng, _ := engine.ParseEngine(in.Engine)
		infos[i] = engine.Target{Name: in.Name, Role: role, Engine: eng, IterationStats: o.IterationStats && eng == engine.TensorRTLLM}
		cfg := engine.BodyReaderConfig{Name: in.Name, Engine: eng, Role: role, KV: engine.KVAuto}
		if infos[i].IterationStats {
			cfg.Format = engine.FormatIterationStats
		}
		if readers[i], err = engine.NewBodyReader(cfg); err != nil {
			return nil, err
		}
	}
	if o.Targets != nil {
		o.Targets(infos)
	}
	l.SetTargets(infos)
	var buf []byte
	var late []ledger.Scrape
	points := make([]ledger.Point, 0, int(dur/time.Second))
	res := &Result{Ledger: l, Model: m, Instances: insts}
	for at := time.Second; at <= dur; at += time.Second {
		m.AdvanceTo(at)
		now := Epoch.Add(at)
		s := int(at / time.Second)
		hs := make([][engine.NumHistograms]engine.Histogram, len(insts))
		res.hists = append(res.hists, hs)
		for i, in := range insts {
			sc := ledger.Scrape{Target: in.Name, Time: now, Direct: true}
			body, ct, err := fetch(m, in.Name, infos[i].IterationStats, buf[:0])
			if err != nil {
				sc.Err, sc.Reason = err, "refused"
			} else {
				buf = body
				obs, t, err := readers[i].Read(body, ct, now)
				switch {
				case err != nil && infos[i].IterationStats:
					// An empty or damaged poll is a failed scrape, as the
					// scheduler records it.
					sc.Err, sc.Reason = err, "adapter"
					l.Record(sc)
					continue
				case err != nil:
					return nil, fmt.Errorf("%s at %v: %w", in.Name, at, err)
				}
				sc.Time = t
				for k, h := range obs.Histograms {
					h.Buckets = append([]engine.Bucket(nil), h.Buckets...)
					hs[i][k] = h
				}
				sc.Duration, sc.Bytes, sc.Samples, sc.Obs = 3*time.Millisecond, len(body), obs.Samples, obs
			}
			if o.Read != nil && o.Read(s, i, &sc) == AfterTick {
				// The reader reuses its observation: a scrape taken later
				// keeps a copy.
				if sc.Obs != nil {
					sc.Obs = copyObservation(sc.Obs)
				}
				late = append(late, sc)
				continue
			}
			l.Record(sc)
		}
		tick := now
		if o.TickAt != nil {
			tick = o.TickAt(s, now)
		}
		points = append(points, l.Tick(tick))
		if o.OnTick != nil {
			o.OnTick(l)
		}
		for _, sc := range late {
			l.Record(sc)
		}
		late = late[:0]
	}
	res.Points = points
	return res, nil
}

// copyObservation copies what a reader reuses of o.
func copyObservation(o *engine.Observation) *engine.Observation {
	c := *o
	c.Counters = append([]engine.CounterValue(nil), o.Counters...)
	for k := range c.Histograms {
		c.Histograms[k].Buckets = append([]engine.Bucket(nil), o.Histograms[k].Buckets...)
	}
	return &c
}

// fetch is an instance's body as a scrape gets it: its exposition, or its
// iteration statistics.
func fetch(m *sim.Model, name string, iterationStats bool, buf []byte) ([]byte, string, error) {
	if iterationStats {
		b, err := m.IterationStats(name, buf)
		return b, "application/json", err
	}
	b, f, err := m.Exposition(name, buf)
	return b, f.ContentType(), err
}
