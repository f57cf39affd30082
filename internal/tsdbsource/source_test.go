package tsdbsource

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/gen"
	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/scrape"
)

// fakeTSDB answers /api/v1/query like Prometheus for a range selector: the
// raw samples of its series inside (time-range, time]. Series are
// (labels, sample function of the scrape index); scrapes land every second
// from t0.
type fakeTSDB struct {
	mu     sync.Mutex
	t0     time.Time
	series []fakeSeries
	down   bool // answer 503
	hits   int
	// behind makes a metric's newest scrape not yet searchable, as when a
	// query runs before the TSDB has written the scrape another query saw.
	behind map[string]bool
	// staleNaN answers a missing sample as VictoriaMetrics does a
	// staleness marker: a NaN sample (Prometheus leaves it out).
	staleNaN bool
	// delay answers every query this late (outside the lock, so that
	// queries in parallel wait in parallel).
	delay time.Duration
}

type fakeSeries struct {
	labels map[string]string
	value  func(i int) (float64, bool)
}

func (f *fakeTSDB) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	time.Sleep(f.delay)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hits++
	if f.down {
		http.Error(w, "unavailable", http.StatusServiceUnavailable)
		return
	}
	if err := r.ParseForm(); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	q := r.Form.Get("query")
	var at float64
	fmt.Sscanf(r.Form.Get("time"), "%g", &at)
	open := strings.LastIndex(q, "[")
	span, err := time.ParseDuration(strings.TrimSuffix(q[open+1:], "]"))
	if err != nil {
		http.Error(w, "bad range", http.StatusBadRequest)
		return
	}
	end := time.UnixMilli(int64(at * 1000))
	type res struct {
		Metric map[string]string `json:"metric"`
		Values [][2]any          `json:"values"`
	}
	out := []res{}
	for _, s := range f.series {
		name := s.labels["__name__"]
		if !strings.Contains(q, `"`+name) && !strings.Contains(q, "|"+name) {
			continue
		}
		rs := res{Metric: s.labels}
		for i := 0; ; i++ {
			ts := f.t0.Add(time.Duration(i) * time.Second)
			if ts.After(end) {
				break
			}
			if !ts.After(end.Add(-span)) || (f.behind[name] && ts.After(end.Add(-time.Second))) {
				continue
			}
			v, ok := s.value(i)
			if !ok && f.staleNaN {
				v, ok = math.NaN(), true
			}
			if ok {
				rs.Values = append(rs.Values, [2]any{float64(ts.UnixMilli()) / 1000, fmt.Sprint(v)})
			}
		}
		if len(rs.Values) > 0 {
			out = append(out, rs)
		}
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"status": "success", "data": map[string]any{"resultType": "matrix", "result": out}})
}

func engineLabels(name, role, eng string, extra ...string) map[string]string {
	m := map[string]string{"job": "ptdmon-engines", "instance": name + ":8000", LabelTarget: name, LabelRole: role, LabelEngine: eng}
	for i := 0; i+1 < len(extra); i += 2 {
		m[extra[i]] = extra[i+1]
	}
	return m
}

func with(m map[string]string, kv ...string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

// twoEngines: a vLLM prefill completing 3 req/s that restarts at scrape 8
// (down at 7), and an SGLang decode completing 2 req/s.
func twoEngines(t0 time.Time) *fakeTSDB {
	p := engineLabels("p0", "prefill", "vllm")
	d := engineLabels("d0", "decode", "sglang")
	always := func(v float64) func(int) (float64, bool) { return func(int) (float64, bool) { return v, true } }
	return &fakeTSDB{t0: t0, series: []fakeSeries{
		{with(p, "__name__", "up"), func(i int) (float64, bool) {
			if i == 7 {
				return 0, true
			}
			return 1, true
		}},
		{with(d, "__name__", "up"), always(1)},
		{with(p, "__name__", "vllm:request_success_total", "finished_reason", "stop", "model_name", "m"), func(i int) (float64, bool) {
			switch {
			case i == 7:
				return 0, false
			case i > 7:
				return float64(3 * (i - 8)), true
			}
			return float64(100 + 3*i), true
		}},
		{with(p, "__name__", "vllm:num_requests_running", "model_name", "m"), always(4)},
		{with(d, "__name__", "sglang:num_requests_total", "model_name", "m", "engine_type", "decode"), func(i int) (float64, bool) { return float64(2 * i), true }},
	}}
}

// rig is a Source on a fake TSDB of twoEngines, on a clock that steps a
// second at a time, 300 ms after each scrape (so a step time never equals
// a sample time).
type rig struct {
	fake  *fakeTSDB
	src   *Source
	l     *ledger.Ledger
	clock time.Time
}

func newRig(t *testing.T) *rig {
	t.Helper()
	t0 := time.UnixMilli(1_700_000_000_000)
	r := &rig{fake: twoEngines(t0), clock: t0.Add(300 * time.Millisecond)}
	srv := httptest.NewServer(r.fake)
	t.Cleanup(srv.Close)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	r.l = ledger.New(ledger.Config{Interval: time.Second, Window: 4 * time.Second, Logger: quiet})
	var err error
	r.src, err = New(r.l, Options{URL: srv.URL, Interval: time.Second, Window: 4 * time.Second, Lag: time.Second,
		Now: func() time.Time { return r.clock }, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// step advances the clock a second, steps, and returns the new point.
func (r *rig) step() ledger.Point {
	r.clock = r.clock.Add(time.Second)
	r.src.Step(context.Background())
	p, _ := r.l.Latest()
	return p
}

// TestRatesFromTSDBSamples: targets come from the labels, rates from the
// TSDB's own sample times, the restart is a down scrape then a reset.
func TestRatesFromTSDBSamples(t *testing.T) {
	t.Run("prometheus", func(t *testing.T) { testRates(t, false) })
	t.Run("stale-markers-as-NaN", func(t *testing.T) { testRates(t, true) })
}

func testRates(t *testing.T, staleNaN bool) {
	r := newRig(t)
	r.fake.staleNaN = staleNaN
	l := r.l
	var p ledger.Point
	for i := 0; i < 14; i++ {
		p = r.step()
		if i == 6 { // evaluated at scrape 6.3: before the restart
			if got := p.Prefill.Instant; !got.OK() || got.V != 3 {
				t.Errorf("prefill instant before the restart: %+v, want 3", got)
			}
		}
	}
	if got := p.Prefill.Window; !got.OK() || got.V != 3 {
		t.Errorf("prefill windowed after the restart: %+v, want 3 (the reset adjusted away)", got)
	}
	if got := p.Decode.Window; !got.OK() || got.V != 2 {
		t.Errorf("decode windowed: %+v, want 2", got)
	}
	sts := l.Targets(p.Time)
	if len(sts) != 2 {
		t.Fatalf("targets %+v: want p0 and d0 from the labels", sts)
	}
	for _, st := range sts {
		switch st.Name {
		case "p0":
			if st.Role != "prefill" || st.Engine != "vllm" || st.URL != "p0:8000" {
				t.Errorf("p0: %+v", st)
			}
			if st.Failures[scrape.ReasonTargetDown] != 1 || st.CounterResets != 1 {
				t.Errorf("p0: failures %v, resets %d: want one down scrape and one reset", st.Failures, st.CounterResets)
			}
			if st.Gauges["requests_running"] != 4 {
				t.Errorf("p0 gauges %v", st.Gauges)
			}
		case "d0":
			if st.Role != "decode" || st.Engine != "sglang" || len(st.Failures) != 0 {
				t.Errorf("d0: %+v", st)
			}
		}
	}
}

// TestOutageIsAbsent: when the TSDB stops answering, every target is down
// with reason "source" and the stage rates are absent, never 0.
func TestOutageIsAbsent(t *testing.T) {
	r := newRig(t)
	fake, l := r.fake, r.l
	for i := 0; i < 4; i++ {
		r.step()
	}
	if p := r.step(); !p.Decode.Window.OK() {
		t.Fatalf("decode absent before the outage: %+v", p.Decode.Window)
	}
	fake.mu.Lock()
	fake.down = true
	fake.hits = 0
	fake.mu.Unlock()
	p := r.step()
	for name, n := range map[string]ledger.Num{"prefill": p.Prefill.Window, "decode": p.Decode.Window, "prefill instant": p.Prefill.Instant} {
		if n.OK() {
			t.Errorf("%s during the outage: %v, want absent", name, n.V)
		} else if !strings.Contains(n.Why, "down") {
			t.Errorf("%s during the outage: absent because %q, want the target down", name, n.Why)
		}
	}
	for _, st := range l.Targets(p.Time) {
		if st.Up || st.Failures[scrape.ReasonSource] != 1 || !strings.Contains(st.LastError, "503") {
			t.Errorf("%s during the outage: up %v, failures %v, error %q", st.Name, st.Up, st.Failures, st.LastError)
		}
	}
	if fake.hits < 2 {
		t.Errorf("%d requests during the outage: want retries", fake.hits)
	}
}

// TestResponseLimit: an answer past the limit is an error, not retried.
func TestResponseLimit(t *testing.T) {
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n++
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"a":"%s"},"values":[]}]}}`, strings.Repeat("x", 4096))
	}))
	defer srv.Close()
	a, err := newAPI(srv.URL, nil, 1024, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = retry(context.Background(), a, "up[1s]", time.Now(), time.Second)
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("err = %v, want ErrTooLarge", err)
	}
	if n != 1 {
		t.Errorf("%d requests, want 1 (no retry)", n)
	}
	a, _ = newAPI(srv.URL, nil, 1<<20, nil)
	if _, err := retry(context.Background(), a, "up[1s]", time.Now(), time.Second); err != nil {
		t.Errorf("under the limit: %v", err)
	}
}

// TestGroupsCoverEveryName: each name the adapters read is queried by
// exactly one group, and every group is one canonical metric.
func TestGroupsCoverEveryName(t *testing.T) {
	seen := map[string]int{}
	for _, g := range metricGroups(true) {
		for _, n := range append(append([]string(nil), g.names...), g.hist...) {
			seen[n]++
		}
		if !strings.Contains(g.selector(), LabelTarget+`!=""`) {
			t.Errorf("group %s: selector %s does not keep to engine targets", g.metric, g.selector())
		}
	}
	for _, n := range engine.KnownNames() {
		if seen[n] != 1 {
			t.Errorf("%s is queried by %d groups, want 1", n, seen[n])
		}
	}
	known := map[string]bool{}
	for m := engine.Metric(0); int(m) < engine.NumMetrics; m++ {
		known[m.String()] = true
	}
	for _, g := range metricGroups(true) {
		if !known[g.metric] && !strings.HasPrefix(g.metric, "unclassified ") {
			t.Errorf("group %s is neither a canonical metric nor an unclassified name", g.metric)
		}
	}
}

// TestLabelsOfGeneratedScrapeConfig: the labels targets are discovered from
// are the ones the generated scrape configuration writes.
func TestLabelsOfGeneratedScrapeConfig(t *testing.T) {
	cfg, err := gen.PrometheusConfig(gen.Input{Targets: []engine.Target{{Name: "p0", URL: "http://10.0.0.1:8000/metrics", Role: "prefill", Engine: "vllm"}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []string{LabelTarget, LabelRole, LabelEngine} {
		if !strings.Contains(string(cfg), "target_label: "+l+"\n") {
			t.Errorf("the generated scrape config does not write %s", l)
		}
	}
}

// TestSeriesText: label values are escaped as the text format wants, and
// the TSDB's own labels are dropped.
func TestSeriesText(t *testing.T) {
	m := map[string]string{"__name__": "x_total", "job": "j", "instance": "i", LabelTarget: "t", "a": `q"b\c` + "\n"}
	got := string(seriesText(nil, toMetric(m)))
	if want := `x_total{a="q\"b\\c\n"}`; got != want {
		t.Errorf("seriesText = %s, want %s", got, want)
	}
}

func toMetric(m map[string]string) model.Metric {
	out := model.Metric{}
	for k, v := range m {
		out[model.LabelName(k)] = model.LabelValue(v)
	}
	return out
}

// TestLatencyHistogramsOptIn: without Histograms no bucket is read, but the
// KV byte histograms' _sum and _count (counters) still are.
func TestLatencyHistogramsOptIn(t *testing.T) {
	var sel strings.Builder
	for _, g := range metricGroups(false) {
		for i := range engine.NumHistograms {
			if engine.HistogramAt(i).String() == g.metric {
				t.Errorf("latency group %s read without Histograms", g.metric)
			}
		}
		if g.buckets && !strings.HasPrefix(g.metric, "unclassified ") {
			t.Errorf("group %s reads buckets without Histograms", g.metric)
		}
		sel.WriteString(g.selector())
	}
	if !strings.Contains(sel.String(), `vllm:nixl_bytes_transferred_(?:sum|count)`) {
		t.Errorf("NIXL bytes (_sum) not read: %s", sel.String())
	}
	if strings.Contains(sel.String(), "time_to_first_token") {
		t.Error("TTFT read without Histograms")
	}
}

// TestWaitsForEveryQuery: a scrape one query has seen and another has not
// yet is not fed until both have it, so no sample lacks a counter.
func TestWaitsForEveryQuery(t *testing.T) {
	r := newRig(t)
	for i := 0; i < 12; i++ {
		r.fake.mu.Lock()
		r.fake.behind = map[string]bool{"vllm:request_success_total": i%3 == 1}
		r.fake.mu.Unlock()
		p := r.step()
		if i < 2 || (i >= 6 && i <= 9) {
			continue // the first samples, and around p0's restart
		}
		if got := p.Prefill.Instant; !got.OK() || got.V != 3 {
			t.Errorf("step %d: prefill instant %+v, want 3", i, got)
		}
	}
}

// TestTargetMoves: a target whose address changes (a rescheduled pod) stays
// one target at its new address, its rates continue and no reset is seen.
func TestTargetMoves(t *testing.T) {
	r := newRig(t)
	a, b := engineLabels("p0", "prefill", "vllm"), engineLabels("p0", "prefill", "vllm", "instance", "10.0.0.2:8000")
	before := func(v func(int) float64) func(int) (float64, bool) {
		return func(i int) (float64, bool) { return v(i), i < 5 }
	}
	after := func(v func(int) float64) func(int) (float64, bool) {
		return func(i int) (float64, bool) { return v(i), i >= 5 }
	}
	one := func(int) float64 { return 1 }
	done := func(i int) float64 { return float64(3 * i) }
	r.fake.mu.Lock()
	r.fake.series = []fakeSeries{
		{with(a, "__name__", "up"), before(one)},
		{with(b, "__name__", "up"), after(one)},
		{with(a, "__name__", "vllm:request_success_total", "finished_reason", "stop"), before(done)},
		{with(b, "__name__", "vllm:request_success_total", "finished_reason", "stop"), after(done)},
	}
	r.fake.mu.Unlock()
	for i := 0; i < 10; i++ {
		p := r.step()
		if i < 2 {
			continue
		}
		if got := p.Prefill.Instant; !got.OK() || got.V != 3 {
			t.Errorf("step %d: prefill instant %+v, want 3", i, got)
		}
	}
	p, _ := r.l.Latest()
	sts := r.l.Targets(p.Time)
	if len(sts) != 1 || sts[0].URL != "10.0.0.2:8000" || sts[0].CounterResets != 0 {
		t.Errorf("targets after the move: %+v; want p0 at its new address, no reset", sts)
	}
}

// TestURLParamsSent: the source URL's query parameters (Thanos' dedup)
// reach the server with every query, and so does nocache=1.
func TestURLParamsSent(t *testing.T) {
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		got = append(got, r.URL.Path, r.Form.Get("dedup"), r.Form.Get("nocache"), r.Form.Get("time"))
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"status":"success","data":{"resultType":"matrix","result":[]}}`)
	}))
	defer srv.Close()
	a, err := newAPI(srv.URL+"/prefix?dedup=true", nil, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	at := time.UnixMilli(1_700_000_000_123)
	if _, err := retry(context.Background(), a, "up[2s]", at, time.Second); err != nil {
		t.Fatal(err)
	}
	want := []string{"/prefix/api/v1/query", "true", "1", "1700000000.123"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("request %q, want %q", got, want)
	}
}
