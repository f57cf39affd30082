// Package advicetest drives the simulator in simulated time through the
// real engine adapters into a ledger, for tests of what reads the ledger.
package advicetest

import (
	"fmt"
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
}

// RunWith is RunHistograms with options.
func RunWith(sc sim.Scenario, seed int64, dur time.Duration, o Options) (*Result, error) {
	m, err := sim.NewModel(sc, seed, Epoch)
	if err != nil {
		return nil, err
	}
	if o.History <= 0 {
		o.History = int(dur/time.Second) + 1
	}
	l := ledger.New(ledger.Config{Interval: time.Second, Window: 5 * time.Second,
		History: o.History, KVRequest: kvsize.Request{Bytes: sc.KVBytesPerRequest}, PoolRequests: o.PoolRequests})
	insts := m.Instances()
	infos := make([]engine.Target, len(insts))
	readers := make([]*engine.Reader, len(insts))
	for i, in := range insts {
		role, _ := engine.ParseRole(in.Role)
		eng, _ := engine.ParseEngine(in.Engine)
		infos[i] = engine.Target{Name: in.Name, Role: role, Engine: eng}
		readers[i] = engine.NewReader(eng, role, engine.KVAuto)
	}
	l.SetTargets(infos)
	var buf []byte
	points := make([]ledger.Point, 0, int(dur/time.Second))
	res := &Result{Ledger: l, Model: m, Instances: insts}
	for at := time.Second; at <= dur; at += time.Second {
		m.AdvanceTo(at)
		now := Epoch.Add(at)
		hs := make([][engine.NumHistograms]engine.Histogram, len(insts))
		res.hists = append(res.hists, hs)
		for i, in := range insts {
			body, f, err := m.Exposition(in.Name, buf[:0])
			if err != nil {
				l.Record(ledger.Scrape{Target: in.Name, Time: now, Err: err, Reason: "refused"})
				continue
			}
			buf = body
			obs, err := readers[i].Read(body, f.ContentType())
			if err != nil {
				return nil, fmt.Errorf("%s at %v: %w", in.Name, at, err)
			}
			for k, h := range obs.Histograms {
				h.Buckets = append([]engine.Bucket(nil), h.Buckets...)
				hs[i][k] = h
			}
			l.Record(ledger.Scrape{Target: in.Name, Time: now, Obs: obs})
		}
		points = append(points, l.Tick(now))
		if o.OnTick != nil {
			o.OnTick(l)
		}
	}
	res.Points = points
	return res, nil
}
