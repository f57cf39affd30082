package ledger

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/kvsize"
	"github.com/ptdmon/ptdmon/internal/scrape"
)

var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func at(sec float64) time.Time { return t0.Add(time.Duration(sec * float64(time.Second))) }

// obs builds an observation with one source series per counter value given.
func obs(role engine.Role, completed, kvBytes float64, gauges map[engine.Metric]float64) *engine.Observation {
	o := &engine.Observation{Engine: engine.VLLM, Role: role, Model: "m"}
	if !math.IsNaN(completed) {
		o.Counters = append(o.Counters, engine.CounterValue{Metric: engine.Completed, Series: 1, Value: completed})
	}
	if !math.IsNaN(kvBytes) {
		o.Counters = append(o.Counters, engine.CounterValue{Metric: engine.KVBytes, Series: 2, Value: kvBytes})
	}
	for m, v := range gauges {
		o.Gauges[m.GaugeIndex()] = v
		o.HasGauges[m.GaugeIndex()] = true
	}
	return o
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func wantVal(t *testing.T, what string, n Num, v float64) {
	t.Helper()
	if !n.OK() || !near(n.V, v) {
		t.Errorf("%s = %+v, want %v", what, n, v)
	}
}

func wantAbsent(t *testing.T, what string, n Num, reason string) {
	t.Helper()
	if n.OK() {
		t.Errorf("%s = %v, want absent (%s)", what, n.V, reason)
	} else if !strings.Contains(n.Why, reason) {
		t.Errorf("%s absent because %q, want %q", what, n.Why, reason)
	}
}

func newLedger(bytesPerReq int64) *Ledger {
	l := New(Config{Interval: time.Second, Window: 5 * time.Second, KVRequest: kvsize.Request{Bytes: bytesPerReq}})
	l.SetTargets([]engine.Target{
		{Name: "p0", Role: engine.Prefill},
		{Name: "p1", Role: engine.Prefill},
		{Name: "d0", Role: engine.Decode},
	})
	return l
}

func TestRatesUseRealTimeDifferences(t *testing.T) {
	// Irregular spacing: p0 samples at 0, 0.9, 2.3, 3.0, 4.6 s; the counter
	// grows by 10 req/s of real time, so every rate must be exactly 10.
	l := newLedger(1 << 30)
	times := []float64{0, 0.9, 2.3, 3.0, 4.6}
	for _, s := range times {
		l.Record(Scrape{Target: "p0", Time: at(s), Obs: obs(engine.Prefill, 100+10*s, (100+10*s)*(1<<30), nil)})
	}
	p := l.Tick(at(4.7))
	ip := p.Instances[1] // sorted: d0, p0, p1
	if ip.Target != "p0" {
		t.Fatalf("instances not sorted: %v", ip.Target)
	}
	wantVal(t, "p0 instant", ip.Instant, 10)
	wantVal(t, "p0 window", ip.Window, 10)
	if !ip.WindowFrom.Equal(at(0)) || !ip.WindowTo.Equal(at(4.6)) {
		t.Errorf("window span %v..%v, want 0..4.6 s", ip.WindowFrom, ip.WindowTo)
	}
	wantVal(t, "kv req/s", p.KV.Instant, 10)
	wantVal(t, "kv bytes/s", p.KV.BytesWindow, 10*(1<<30))
	// p1 never scraped: the prefill stage is the sum of what is known, marked missing.
	wantVal(t, "prefill instant", p.Prefill.Instant, 10)
	if p.Prefill.Up != 1 || p.Prefill.Instances != 2 || len(p.Prefill.Missing) != 1 {
		t.Errorf("prefill up/instances/missing = %d/%d/%v", p.Prefill.Up, p.Prefill.Instances, p.Prefill.Missing)
	}
	wantAbsent(t, "decode instant", p.Decode.Instant, "no successful scrape yet")
}

func TestWindowKeepsOnlySamplesInsideW(t *testing.T) {
	// 0..10 s at 1 s; the first 5 s at 1 req/s, then 3 req/s. At t=10 the
	// window (5,10] holds samples 6..10: all at 3 req/s.
	l := newLedger(0)
	v := 0.0
	for s := 0; s <= 10; s++ {
		if s > 0 {
			if s <= 5 {
				v += 1
			} else {
				v += 3
			}
		}
		l.Record(Scrape{Target: "d0", Time: at(float64(s)), Obs: obs(engine.Decode, v, math.NaN(), nil)})
	}
	p := l.Tick(at(10))
	wantVal(t, "decode window", p.Decode.Window, 3)
	wantVal(t, "decode instant", p.Decode.Instant, 3)
	// At 7.5 s, (2.5,7.5] holds samples 3..7: (1+1+3+3)/4 s.
	p = l.Tick(at(7.5))
	wantVal(t, "decode window at 7.5", p.Decode.Window, 2)
}

func TestCounterResetCountsTheNewValue(t *testing.T) {
	// 100, 110, 120, then the engine restarts: 5, 15. Prometheus semantics:
	// the increase across the reset is the new value (5).
	l := newLedger(100)
	vals := []float64{100, 110, 120, 5, 15}
	for i, v := range vals {
		l.Record(Scrape{Target: "p0", Time: at(float64(i)), Obs: obs(engine.Prefill, v, v*100, nil)})
	}
	p := l.Tick(at(4))
	// Window (−1,4]: adjusted 100 → 100+10+10+5+10 = 135 over 4 s.
	wantVal(t, "window across reset", p.Prefill.Window, 35.0/4)
	wantVal(t, "instant after reset", p.Prefill.Instant, 10)
	// Global KV counter: first value 100·100 plus every increase, never decreasing.
	wantVal(t, "global kv", p.GlobalKVBytes, 13500)
	st := l.Targets(at(4))
	for _, s := range st {
		if s.Name == "p0" && s.CounterResets != 2 { // completions and KV bytes
			t.Errorf("resets = %d, want 2", s.CounterResets)
		}
	}
	// The reset sample itself: 120 → 5 gives +5 over 1 s.
	l2 := newLedger(100)
	for i, v := range vals[:4] {
		l2.Record(Scrape{Target: "p0", Time: at(float64(i)), Obs: obs(engine.Prefill, v, math.NaN(), nil)})
	}
	wantVal(t, "instant at reset", l2.Tick(at(3)).Prefill.Instant, 5)
}

func TestDownAndStaleTargetsAreAbsentNotZero(t *testing.T) {
	l := newLedger(0)
	for s := 0; s < 3; s++ {
		l.Record(Scrape{Target: "d0", Time: at(float64(s)), Obs: obs(engine.Decode, float64(10*s), math.NaN(), map[engine.Metric]float64{engine.Running: 7})})
	}
	l.Record(Scrape{Target: "d0", Time: at(3), Err: errors.New("connection refused"), Reason: scrape.ReasonRefused})
	p := l.Tick(at(3))
	wantAbsent(t, "decode instant while down", p.Decode.Instant, "connection refused")
	wantAbsent(t, "decode running while down", p.Decode.Running, "down")
	if p.Decode.Up != 0 {
		t.Errorf("decode up = %d, want 0", p.Decode.Up)
	}
	// Up again, then silence: after StaleAfter (2 s + 1 s) the values go absent.
	l.Record(Scrape{Target: "d0", Time: at(4), Obs: obs(engine.Decode, 40, math.NaN(), map[engine.Metric]float64{engine.Running: 7})})
	wantVal(t, "running when fresh", l.Tick(at(4.5)).Decode.Running, 7)
	wantAbsent(t, "running when stale", l.Tick(at(7.5)).Decode.Running, "stale")
	st := l.Targets(at(4))
	if st[0].Failures[scrape.ReasonRefused] != 1 {
		t.Errorf("failures = %v", st[0].Failures)
	}
}

func TestVanishedTargetKeepsGlobalKV(t *testing.T) {
	l := newLedger(1)
	l.Record(Scrape{Target: "p0", Time: at(0), Obs: obs(engine.Prefill, 0, 1000, nil)})
	l.Record(Scrape{Target: "p1", Time: at(0), Obs: obs(engine.Prefill, 0, 500, nil)})
	l.Record(Scrape{Target: "p0", Time: at(1), Obs: obs(engine.Prefill, 0, 1600, nil)})
	wantVal(t, "global before", l.Tick(at(1)).GlobalKVBytes, 2100)
	l.SetTargets([]engine.Target{{Name: "p1", Role: engine.Prefill}})
	l.Record(Scrape{Target: "p1", Time: at(2), Obs: obs(engine.Prefill, 0, 700, nil)})
	wantVal(t, "global after p0 left", l.Tick(at(2)).GlobalKVBytes, 2300)
}

func TestKVRequestsNeedBRequest(t *testing.T) {
	l := newLedger(0)
	for s := 0; s < 3; s++ {
		l.Record(Scrape{Target: "p0", Time: at(float64(s)), Obs: obs(engine.Prefill, 0, float64(s)*4096, nil)})
	}
	p := l.Tick(at(2))
	wantVal(t, "kv bytes/s", p.KV.BytesInstant, 4096)
	wantAbsent(t, "kv req/s", p.KV.Instant, "B_request is not set")
	// And with no KV source at all, bytes are absent too, with the reason.
	l2 := newLedger(1)
	l2.Record(Scrape{Target: "d0", Time: at(0), Obs: obs(engine.Decode, 0, math.NaN(), nil)})
	l2.Record(Scrape{Target: "d0", Time: at(1), Obs: obs(engine.Decode, 5, math.NaN(), nil)})
	p = l2.Tick(at(1))
	wantAbsent(t, "kv bytes without a source", p.KV.BytesInstant, "no target exports a KV byte counter")
	wantAbsent(t, "global kv without a source", p.GlobalKVBytes, "no target exports")
}

func TestPerSeriesResetDetection(t *testing.T) {
	// Two source series; one resets while the other grows more: the sum
	// grows, but the reset must still be seen on its own series.
	l := newLedger(0)
	rec := func(s float64, a, b float64) {
		o := &engine.Observation{Engine: engine.VLLM, Role: engine.Decode}
		o.Counters = []engine.CounterValue{{Metric: engine.Completed, Series: 1, Value: a}, {Metric: engine.Completed, Series: 2, Value: b}}
		l.Record(Scrape{Target: "d0", Time: at(s), Obs: o})
	}
	rec(0, 50, 0)
	rec(1, 2, 100) // series 1 reset to 2 (+2), series 2 +100
	wantVal(t, "instant", l.Tick(at(1)).Decode.Instant, 102)
}

func TestHistogramQuantilesOverWindow(t *testing.T) {
	l := newLedger(0)
	rec := func(s float64, le1, inf, sum float64) {
		o := obs(engine.Decode, 0, math.NaN(), nil)
		h := &o.Histograms[engine.TTFT.HistogramIndex()]
		h.Present, h.HasCount, h.HasSum = true, true, true
		h.Buckets = []engine.Bucket{{UpperBound: 0.5, Count: le1}, {UpperBound: 1, Count: le1}, {UpperBound: 2, Count: inf}, {UpperBound: math.Inf(1), Count: inf}}
		h.Count, h.Sum = inf, sum
		l.Record(Scrape{Target: "d0", Time: at(s), Obs: o})
	}
	// Before the window: 1000 fast requests. In the window: 10 requests,
	// all between 1 and 2 s. Quantiles must reflect only the window.
	rec(0, 1000, 1000, 100)
	rec(3, 1000, 1000, 100)
	rec(6, 1000, 1010, 115)
	p := l.Tick(at(6))
	// p50 of 10 in (1,2]: 1 + (2−1)·5/10 = 1.5; p90 → 1.9.
	wantVal(t, "ttft p50", p.Decode.TTFT.P50, 1.5)
	wantVal(t, "ttft p90", p.Decode.TTFT.P90, 1.9)
	wantAbsent(t, "itl p50", p.Decode.ITL.P50, "no ITL histogram")
}

func TestQuantileMatchesPromQL(t *testing.T) {
	// Cases from PromQL's histogram_quantile semantics.
	inf := math.Inf(1)
	f := func(q float64, bounds, counts []float64, want float64, ok bool) {
		t.Helper()
		got, gotOK := quantile(q, bounds, counts)
		if gotOK != ok || ok && !near(got, want) {
			t.Errorf("quantile(%v, %v, %v) = %v, %v; want %v, %v", q, bounds, counts, got, gotOK, want, ok)
		}
	}
	f(0.5, []float64{1, 2, inf}, []float64{10, 20, 20}, 1, true)    // rank 10 lands at the top of bucket 1
	f(0.75, []float64{1, 2, inf}, []float64{10, 20, 20}, 1.5, true) // rank 15: halfway through (1,2]
	f(0.99, []float64{1, 2, inf}, []float64{10, 20, 40}, 2, true)   // in +Inf: the last finite bound
	f(0.25, []float64{1, 2, inf}, []float64{8, 8, 8}, 0.25, true)   // first bucket from 0
	f(0.5, []float64{1, 2}, []float64{1, 2}, 0, false)              // no +Inf bucket
	f(0.5, []float64{1, 2, inf}, []float64{0, 0, 0}, 0, false)      // no observations
}

func TestHistoryIsBounded(t *testing.T) {
	l := New(Config{Interval: time.Second, Window: 5 * time.Second, History: 10, InstanceBudget: 12})
	l.SetTargets([]engine.Target{{Name: "a", Role: engine.Prefill}, {Name: "b", Role: engine.Decode}})
	for s := 0; s < 25; s++ {
		l.Tick(at(float64(s)))
	}
	pts := l.Since(time.Time{})
	if len(pts) != 10 {
		t.Fatalf("history holds %d points, want 10", len(pts))
	}
	if !pts[9].Time.Equal(at(24)) || !pts[0].Time.Equal(at(15)) {
		t.Errorf("history spans %v..%v", pts[0].Time, pts[9].Time)
	}
	kept := 0
	for _, p := range pts {
		kept += len(p.Instances)
	}
	if kept > 12 || len(pts[9].Instances) != 2 {
		t.Errorf("instance entries kept = %d (newest %d), want ≤ 12 with the newest intact", kept, len(pts[9].Instances))
	}
}

func TestJSONAbsentIsNullWithReason(t *testing.T) {
	l := newLedger(0)
	p := l.Tick(at(0))
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	pre := m["prefill"].(map[string]any)
	if pre["requests_per_second"] != nil {
		t.Errorf("absent rate encoded as %v, want null", pre["requests_per_second"])
	}
	why := pre["absent"].(map[string]any)
	if !strings.Contains(why["requests_per_second"].(string), "no successful scrape") {
		t.Errorf("absent reasons = %v", why)
	}
	if _, ok := why["queues.inflight"]; !ok {
		t.Errorf("nested absent reason missing: %v", why)
	}
}

func TestQuantilesAcrossBucketSchemes(t *testing.T) {
	// vLLM-like buckets on one instance, SGLang-like on another: 10
	// observations ≤ 0.5 s on each. The merged median must stay ≤ 0.5 s,
	// not jump to the top bucket.
	l := newLedger(0)
	l.SetTargets([]engine.Target{{Name: "a", Role: engine.Decode}, {Name: "b", Role: engine.Decode}})
	rec := func(name string, s float64, bounds []float64, n float64) {
		o := obs(engine.Decode, 0, math.NaN(), nil)
		h := &o.Histograms[engine.TTFT.HistogramIndex()]
		h.Present, h.HasCount = true, true
		for _, b := range bounds {
			c := n
			if b < 0.25 {
				c = 0
			}
			h.Buckets = append(h.Buckets, engine.Bucket{UpperBound: b, Count: c})
		}
		h.Count = n
		l.Record(Scrape{Target: name, Time: at(s), Obs: o})
	}
	inf := math.Inf(1)
	va := []float64{0.1, 0.25, 0.5, 1, 2560, inf}
	sg := []float64{0.2, 0.4, 0.6, 160, inf}
	rec("a", 0, va, 0)
	rec("b", 0, sg, 0)
	rec("a", 2, va, 10)
	rec("b", 2, sg, 10)
	p := l.Tick(at(2))
	for _, q := range []Num{p.Decode.TTFT.P50, p.Decode.TTFT.P90, p.Decode.TTFT.P99} {
		if !q.OK() || q.V > 0.6 {
			t.Errorf("quantile %+v, want ≤ 0.6 s", q)
		}
	}
}

func TestStageMarksInstancesWithoutCompletionsPartial(t *testing.T) {
	// p1 is up but exports no completion counter (e.g. an engine started
	// without its request metrics): the stage sums p0 and names p1.
	l := newLedger(0)
	for s := 0; s < 3; s++ {
		l.Record(Scrape{Target: "p0", Time: at(float64(s)), Obs: obs(engine.Prefill, float64(4*s), math.NaN(), nil)})
		l.Record(Scrape{Target: "p1", Time: at(float64(s)), Obs: obs(engine.Prefill, math.NaN(), math.NaN(), map[engine.Metric]float64{engine.Running: 2})})
	}
	p := l.Tick(at(2))
	wantVal(t, "prefill window", p.Prefill.Window, 4)
	if !p.Prefill.Partial || len(p.Prefill.Missing) != 1 || p.Prefill.Missing[0] != "p1" || p.Prefill.Up != 2 {
		t.Errorf("prefill partial=%v missing=%v up=%d; want partial, [p1], 2 up", p.Prefill.Partial, p.Prefill.Missing, p.Prefill.Up)
	}
	wantAbsent(t, "p1 rate", p.Instances[2].Window, "no requests_completed counter")
}

func TestKVRequestOwnedByLedger(t *testing.T) {
	detail := &kvsize.Result{Rules: []string{"rules"}}
	l := New(Config{KVRequest: kvsize.Request{Bytes: 1 << 30, Basis: "flag", Detail: detail}})
	if got := l.KVRequest(); got.Bytes != 1<<30 || got.Basis != "flag" || got.Detail != detail {
		t.Errorf("KVRequest() = %+v, want the configured one", got)
	}
	l.SetKVRequest(kvsize.Request{Basis: "flag"})
	if got := l.KVRequest(); got.Bytes != 0 || got.Basis != kvsize.BasisUnset {
		t.Errorf("after unsetting: %+v, want 0 bytes from %q", got, kvsize.BasisUnset)
	}
	l.SetKVRequest(kvsize.Request{Bytes: 2 << 20, Basis: "model-config"})
	if got := l.Config().KVRequest; got.Bytes != 2<<20 || got.Basis != "model-config" {
		t.Errorf("Config().KVRequest = %+v", got)
	}
}

// A counter the target did not report until mid-run: between two direct
// reads of the target's exposition it was made in between (an engine makes
// a labelled counter at its first increment), so its first value is an
// increase, counted from 0 at the read before, by the window's rate and
// the instant rate. From a source that may show a family late (a TSDB's
// rebuilt exposition can lack it at first) it starts from its first value,
// as Prometheus' rate() does: its whole total would read as one burst.
// Its increases from then on count either way.
func TestCounterFirstSeenMidRun(t *testing.T) {
	f := func(direct bool, wantWindow float64, wantFirst Num) {
		t.Helper()
		l := newLedger(1 << 20)
		var p Point
		var instant []Num
		for s := 0; s <= 4; s++ {
			o := obs(engine.Prefill, float64(10*s), 0, nil)
			// Not reported until 3 s, then with 9, one more by 4 s.
			if s >= 3 {
				o.Counters = append(o.Counters, engine.CounterValue{Metric: engine.Shed, Series: 3, Value: float64(9 + s - 3)})
			}
			l.Record(Scrape{Target: "p0", Time: at(float64(s)), Obs: o, Direct: direct})
			l.Record(Scrape{Target: "d0", Time: at(float64(s)), Obs: obs(engine.Decode, float64(10*s), 0, nil), Direct: direct})
			l.mu.Lock()
			instant = append(instant, l.targets["p0"].instant(engine.Shed))
			l.mu.Unlock()
			p = l.Tick(at(float64(s)))
		}
		pool, ok := p.Pool("m")
		if !ok {
			t.Fatalf("no pool m in %+v", p.Pools)
		}
		if got := pool.Failures.Shed.PerSecond; !got.OK() || math.Abs(got.V-wantWindow) > 1e-9 {
			t.Errorf("direct %v: shed over the window %+v, want %g/s", direct, got, wantWindow)
		}
		if got := instant[3]; got.OK() != wantFirst.OK() || got.OK() && math.Abs(got.V-wantFirst.V) > 1e-9 {
			t.Errorf("direct %v: instant shed rate at its first value %+v, want %+v", direct, got, wantFirst)
		}
		if got := instant[2]; got.OK() {
			t.Errorf("direct %v: instant shed rate before the counter exists %+v, want absent", direct, got)
		}
		if got := instant[4]; !got.OK() || math.Abs(got.V-1) > 1e-9 {
			t.Errorf("direct %v: instant shed rate after its first value %+v, want 1/s", direct, got)
		}
	}
	// 10 shed over the window's 4 s; its first 9 in the second before 3 s.
	f(true, 2.5, Val(9))
	// 1 shed after its first value, over the second it took.
	f(false, 1, Absent(""))
}
