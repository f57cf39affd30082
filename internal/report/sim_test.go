package report

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/diagnose"
	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/kvsize"
	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/sim"
	"github.com/ptdmon/ptdmon/internal/sim/simtest"
	"github.com/ptdmon/ptdmon/internal/slo"
)

// simInput runs a built-in scenario (changed by edit, if set) in simulated
// time and returns the run as a report's Input, with the model for its
// ground truth.
func simInput(t testing.TB, name string, seed int64, dur time.Duration, edit func(*sim.Scenario)) (Input, *sim.Model) {
	t.Helper()
	sc, err := sim.LoadScenario(name)
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(&sc)
	}
	js, err := json.Marshal(sc)
	if err != nil {
		t.Fatal(err)
	}
	res, tp, err := simRun(sc, js, seed, dur)
	if err != nil {
		t.Fatal(err)
	}
	var targets []Target
	for _, in := range res.Instances {
		targets = append(targets, Target{Name: in.Name, Role: in.Role, Engine: in.Engine, Model: sc.Model})
	}
	kv := kvsize.Request{Bytes: sc.KVBytesPerRequest, Basis: kvsize.BasisSimulator}
	return Input{
		Meta: Meta{Targets: targets, BRequest: kv,
			ConfigHash: fmt.Sprintf("%x", sha256.Sum256(js))[:12], Version: "test", Interval: time.Second, Window: 5 * time.Second,
			SLO: slo.Thresholds{TTFT: 2, ITL: 0.05, E2E: 20}},
		Points:  res.Points,
		Buckets: func(from, to time.Time) (Latencies, error) { return tp.latencies(kv, from, to) },
	}, res.Model
}

// simRuns are the simulated runs of this package's tests, by what was
// run: the scenario as edited (its JSON), the seed and the length. A run
// in simulated time is the same every time (the golden files rest on
// it), and several tests read the same run (TestGolden the one
// TestHTMLInChromium shows, TestReportOffersAndServes the first round of
// TestCompareAdviceApplied), so each is simulated once. Nothing changes a
// run's result or its tape after it: reports are built from them, never
// into them.
var simRuns sync.Map // simRunKey → *simRunOnce

type simRunKey struct {
	scenario string
	seed     int64
	dur      time.Duration
}

type simRunOnce struct {
	once sync.Once
	res  *simtest.Result
	tp   *tape
	err  error
}

// simRun is simtest.RunWith(sc, seed, dur) with its inputs taped, sc's
// JSON being js, run once per key.
func simRun(sc sim.Scenario, js []byte, seed int64, dur time.Duration) (*simtest.Result, *tape, error) {
	v, _ := simRuns.LoadOrStore(simRunKey{string(js), seed, dur}, &simRunOnce{})
	r := v.(*simRunOnce)
	r.once.Do(func() {
		r.tp = &tape{}
		r.res, r.err = simtest.RunWith(sc, seed, dur, simtest.Options{Tap: r.tp})
	})
	return r.res, r.tp, r.err
}

// tape keeps a simulated run's inputs to its ledger in their order, so
// that a span's histograms are read as a recording's are
// (record.Run.Latencies): fed again to a ledger whose window is the span.
type tape struct {
	targets []engine.Target
	events  []tapeEvent
}

type tapeEvent struct {
	scrape *ledger.Scrape // nil: a tick at tick
	tick   time.Time
}

func (tp *tape) Targets(ts []engine.Target) { tp.targets = append([]engine.Target(nil), ts...) }

func (tp *tape) Scrape(s ledger.Scrape) {
	if s.Obs != nil {
		// The reader reuses its observation.
		o := *s.Obs
		o.Counters = append([]engine.CounterValue(nil), o.Counters...)
		for k := range o.Histograms {
			o.Histograms[k].Buckets = append([]engine.Bucket(nil), o.Histograms[k].Buckets...)
		}
		s.Obs = &o
	}
	tp.events = append(tp.events, tapeEvent{scrape: &s})
}

func (tp *tape) Tick(now time.Time, _ ledger.Point) {
	tp.events = append(tp.events, tapeEvent{tick: now})
}

// latencies feeds the inputs up to the tick at to to a ledger whose
// window is to − from, and reads its buckets there, the deployment's and
// each pool's.
func (tp *tape) latencies(kv kvsize.Request, from, to time.Time) (Latencies, error) {
	l := ledger.New(ledger.Config{Interval: time.Second, Window: to.Sub(from), History: 1, KVRequest: kv})
	l.SetTargets(tp.targets)
	// The inputs long before the span change nothing of its histograms'
	// increases, as a recording's replay leaves them out (record.warmUp).
	start := from.Add(-10 * time.Second)
	for _, e := range tp.events {
		at := e.tick
		if e.scrape != nil {
			at = e.scrape.Time
		}
		switch {
		case at.Before(start), at.After(to):
		case e.scrape != nil:
			l.Record(*e.scrape)
		default:
			l.Tick(e.tick)
		}
	}
	whole, ok := l.Buckets()
	if !ok {
		return Latencies{}, errors.New("no tick in the span")
	}
	p, _ := l.Latest()
	out := Latencies{Whole: whole, Pools: map[string]ledger.Buckets{}}
	for i := range p.Instances {
		n := p.Instances[i].Pool
		out.Pools[n], _ = l.PoolBuckets(n)
	}
	if len(out.Pools) < 2 {
		out.Pools = nil
	}
	return out, nil
}

// TestSteadyStateAgainstSimulatorTruth runs scenarios whose true long-run
// rates are known from their configuration (balanced: every stage carries
// the arrival rate; prefill-bound: prefill runs at its engines' capacity
// and the stages after it at that rate) and checks the report against the
// simulator: the warm-up is trimmed (the span starts after the first
// decode completion plus a window), the mean is the counters' true
// increase over the span, and the true rate lies in each interval.
func TestSteadyStateAgainstSimulatorTruth(t *testing.T) {
	f := func(name string, trueRate func(sc sim.Scenario) float64) {
		t.Helper()
		in, m := simInput(t, name, 7, 300*time.Second, nil)
		r, err := Build(in, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !r.Steady.Found {
			t.Fatalf("%s: no steady span: %s", name, r.Steady.Why)
		}
		// Warm-up: the first decode completion, then a whole window
		// before the windowed rate covers only a running pipeline.
		var firstDecode time.Duration
		for d := time.Second; d <= 300*time.Second; d += time.Second {
			if m.TruthAt(d).Totals.DecodeCompleted > 0 {
				firstDecode = d
				break
			}
		}
		if firstDecode == 0 {
			t.Fatalf("%s: no decode completion in the run", name)
		}
		if got, min := r.Steady.From.Sub(simtest.Epoch), firstDecode+in.Meta.Window; got < min {
			t.Errorf("%s: steady span starts at %v, before the pipeline ran (first decode completion %v + W)", name, got, firstDecode)
		}
		if r.Steady.Seconds < 150 {
			t.Errorf("%s: steady span %gs of a 300s run", name, r.Steady.Seconds)
		}
		// The mean is the true completions over the span: the counters'
		// increase from the point before the span to its last point.
		from, to := r.Steady.From.Sub(simtest.Epoch)-time.Second, r.Steady.To.Sub(simtest.Epoch)
		a, b := m.TruthAt(from).Totals, m.TruthAt(to).Totals
		secs := (to - from).Seconds()
		for _, c := range []struct {
			stage string
			got   *float64
			want  float64
		}{
			{"prefill", r.Stages.Prefill.RequestsPerSecond, float64(b.PrefillCompleted-a.PrefillCompleted) / secs},
			{"decode", r.Stages.Decode.RequestsPerSecond, float64(b.DecodeCompleted-a.DecodeCompleted) / secs},
			{"kv", r.Stages.KV.RequestsPerSecond, float64(b.KVBytes-a.KVBytes) / float64(in.Meta.BRequest.Bytes) / secs},
		} {
			if c.got == nil || math.Abs(*c.got-c.want) > 1e-9*c.want {
				t.Errorf("%s: %s mean %v, truth over the span %g", name, c.stage, c.got, c.want)
			}
		}
		want := trueRate(m.Scenario())
		for _, s := range []struct {
			name string
			st   Stage
		}{{"prefill", r.Stages.Prefill}, {"kv", r.Stages.KV}, {"decode", r.Stages.Decode}} {
			ci := s.st.CI95
			if ci == nil {
				t.Fatalf("%s: %s has no interval: %s", name, s.name, s.st.Absent)
			}
			if want < ci[0] || want > ci[1] {
				t.Errorf("%s: %s true rate %g outside the 95%% interval [%g, %g]", name, s.name, want, ci[0], ci[1])
			}
			// The interval is informative: narrower than ±15% of the rate.
			if ci[1]-ci[0] > 0.3*want {
				t.Errorf("%s: %s interval [%g, %g] too wide to say anything", name, s.name, ci[0], ci[1])
			}
		}
		if r.Verdict.Class != diagnose.Class(m.TruthAt(to).Bottleneck) && !(m.TruthAt(to).Bottleneck == "none" && r.Verdict.Class == diagnose.Balanced) {
			t.Errorf("%s: modal verdict %s, the load model's bottleneck %s", name, r.Verdict.Class, m.TruthAt(to).Bottleneck)
		}
	}
	f("balanced", func(sc sim.Scenario) float64 { return sc.TotalRate() })
	f("prefill-bound", func(sc sim.Scenario) float64 {
		var c float64
		for _, g := range sc.Groups {
			p, _, _ := g.CapacityPerEngine(sc)
			c += p * float64(g.Prefill.Instances*max(g.Prefill.DP, 1))
		}
		return c
	})
}
