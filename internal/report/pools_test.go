package report

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/advice"
	"github.com/ptdmon/ptdmon/internal/api"
	"github.com/ptdmon/ptdmon/internal/diagnose"
	"github.com/ptdmon/ptdmon/internal/kvsize"
	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/sim"
	"github.com/ptdmon/ptdmon/internal/sim/simtest"
)

// TestVerdictsByPoolAreTheLiveOnes: two models on one engine kind, one
// limited by its KV link and one by its prefill, each with its own
// B_request. The report's verdict timeline, the deployment's class and
// each pool's, is at every point the one the live API gives over the same
// ledger: judged by pool, not by engine kind.
func TestVerdictsByPoolAreTheLiveOnes(t *testing.T) {
	res, in, kv, qwen := twoPoolRun(t)
	r, err := Build(in, Options{})
	if err != nil {
		t.Fatal(err)
	}

	srv := httptest.NewServer((&api.Server{Ledger: res.Ledger}).Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/api/v1/series?since=" + res.Points[0].Time.Add(-time.Millisecond).Format(time.RFC3339Nano))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var live struct {
		Verdicts []api.VerdictSpan `json:"verdicts"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&live); err != nil {
		t.Fatal(err)
	}

	type judged struct {
		class  diagnose.Class
		groups map[string]diagnose.Class
	}
	at := func(t time.Time, from, to func(i int) time.Time, n int, get func(i int) judged) (judged, bool) {
		for i := range n {
			if !t.Before(from(i)) && !t.After(to(i)) {
				return get(i), true
			}
		}
		return judged{}, false
	}
	seen := map[string]bool{}
	for _, p := range res.Points {
		want, ok := at(p.Time, func(i int) time.Time { return live.Verdicts[i].From }, func(i int) time.Time { return live.Verdicts[i].To },
			len(live.Verdicts), func(i int) judged { return judged{live.Verdicts[i].Class, live.Verdicts[i].Groups} })
		if !ok {
			t.Fatalf("the API's timeline has no span at %v", p.Time)
		}
		got, ok := at(p.Time, func(i int) time.Time { return r.Verdicts[i].From }, func(i int) time.Time { return r.Verdicts[i].To },
			len(r.Verdicts), func(i int) judged { return judged{r.Verdicts[i].Class, r.Verdicts[i].Groups} })
		if !ok {
			t.Fatalf("the report's timeline has no span at %v", p.Time)
		}
		if got.class != want.class || len(got.groups) != len(want.groups) {
			t.Errorf("at %v: report %s %v, live %s %v", p.Time.Sub(simtest.Epoch), got.class, got.groups, want.class, want.groups)
			continue
		}
		for g, c := range want.groups {
			if got.groups[g] != c {
				t.Errorf("at %v: pool %s: report %s, live %s", p.Time.Sub(simtest.Epoch), g, got.groups[g], c)
			}
			seen[g+" "+string(c)] = true
		}
	}
	// The comparison proves little unless the pools disagreed.
	for _, must := range []string{kv.Model + " kv", qwen.Model + " prefill"} {
		if !seen[must] {
			t.Errorf("the live run never had %q; saw %v", must, seen)
		}
	}
}

// twoPoolRun is two models on one engine kind, one limited by its KV link
// and one (qwen) by its prefill, each with its own B_request, run for 180 s,
// and the report input over the run's ledger.
func twoPoolRun(t *testing.T) (res *simtest.Result, in Input, kv sim.Scenario, qwen sim.Group) {
	t.Helper()
	kv, err := sim.LoadScenario("kv-bound")
	if err != nil {
		t.Fatal(err)
	}
	pf, err := sim.LoadScenario("prefill-bound")
	if err != nil {
		t.Fatal(err)
	}
	qwen = pf.Groups[0]
	qwen.Name, qwen.Model, qwen.KVBytesPerRequest = "qwen", "Qwen/Qwen2.5-7B-Instruct", sim.LlamaKVBytes/2
	kv.Groups = []sim.Group{kv.Groups[0], qwen}
	own := map[string]kvsize.Request{
		kv.Model:   {Bytes: kv.Groups[0].BytesPerRequest(kv), Basis: kvsize.BasisSimulator},
		qwen.Model: {Bytes: qwen.KVBytesPerRequest, Basis: kvsize.BasisSimulator},
	}
	res, err = simtest.RunWith(kv, 3, 180*time.Second, simtest.Options{PoolRequests: own})
	if err != nil {
		t.Fatal(err)
	}
	in = Input{Meta: Meta{BRequest: kvsize.Request{Bytes: kv.KVBytesPerRequest}, Interval: time.Second, Window: 5 * time.Second,
		PoolRequests: own}, Points: res.Points}
	return res, in, kv, qwen
}

// TestReportPools: the report of a run of two pools has each pool's part.
// Its stage means over the steady span are the simulator's true
// completions (KV: true bytes ÷ the pool's own B_request) of the pool's
// own instances over the span; its modal verdict is the stage the load
// model saturates in that pool; its capacities are those the live
// /api/v1/advice learns for the pool over the same ledger.
func TestReportPools(t *testing.T) {
	res, in, kv, qwen := twoPoolRun(t)
	r, err := Build(in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, p := range r.Pools {
		names[p.Name] = true
	}
	if len(r.Pools) != 2 || !names[kv.Model] || !names[qwen.Model] {
		t.Fatalf("pools %v, want %s and %s", names, kv.Model, qwen.Model)
	}
	lo, hi := -1, -1
	for i, p := range res.Points {
		if p.Time.Equal(r.Steady.From) {
			lo = i
		}
		if p.Time.Equal(r.Steady.To) {
			hi = i
		}
	}
	if lo < 1 || hi <= lo {
		t.Fatalf("steady span %v–%v not among the points (%d, %d)", r.Steady.From, r.Steady.To, lo, hi)
	}
	// The instant rates at lo..hi tile the span since the point before lo.
	t0, t1 := res.Points[lo-1].Time, res.Points[hi].Time
	a, b := res.Model.TruthAt(t0.Sub(simtest.Epoch)), res.Model.TruthAt(t1.Sub(simtest.Epoch))
	meta := res.Ledger.Meta()
	bottleneck := map[string]string{}
	for i, g := range b.Load.Groups {
		bottleneck[kv.Groups[i].Model] = g.Bottleneck
		if kv.Groups[i].Model == "" {
			bottleneck[kv.Model] = g.Bottleneck
		}
	}
	live := liveAdvice(t, res)
	for _, p := range r.Pools {
		var prefill, decode, bytes int64
		for _, in := range res.Instances {
			if meta[in.Name].Pool != p.Name {
				continue
			}
			x, y := a.Instance(in.Name).Counts, b.Instance(in.Name).Counts
			switch in.Role {
			case "prefill":
				prefill += y.PrefillCompleted - x.PrefillCompleted
			case "decode":
				decode += y.DecodeCompleted - x.DecodeCompleted
			}
			bytes += y.KVBytes - x.KVBytes
		}
		span := t1.Sub(t0).Seconds()
		for _, c := range []struct {
			stage string
			got   *float64
			want  float64
		}{
			{"prefill", p.Stages.Prefill.RequestsPerSecond, float64(prefill) / span},
			{"kv", p.Stages.KV.RequestsPerSecond, float64(bytes) / float64(p.KVRequest.Bytes) / span},
			{"decode", p.Stages.Decode.RequestsPerSecond, float64(decode) / span},
		} {
			if c.got == nil || math.Abs(*c.got-c.want) > 1e-9*c.want || c.want == 0 {
				t.Errorf("%s %s: %v req/s over the steady span, truth %g", p.Name, c.stage, c.got, c.want)
			}
		}
		if string(p.Verdict.Class) != bottleneck[p.Name] || p.Verdict.Share < 0.5 {
			t.Errorf("%s: modal verdict %s (%.0f%% of the span), the load model saturates %s", p.Name, p.Verdict.Class, 100*p.Verdict.Share, bottleneck[p.Name])
		}
		want, ok := live[p.Name]
		if !ok || len(want) != len(p.Capacities) {
			t.Fatalf("%s: live capacities %v, report's %v", p.Name, want, p.Capacities)
		}
		learned := 0
		for i, c := range p.Capacities {
			w := want[i]
			same := func(a, b ledger.Num) bool { return a.OK() == b.OK() && a.V == b.V }
			if c.Stage != w.Stage || !same(c.Total, w.Total) || !same(c.PerInstance, w.PerInstance) || !same(c.AtLeast, w.AtLeast) {
				t.Errorf("%s %s: capacity %v per instance, %v in all, at least %v; live %v, %v, %v",
					p.Name, c.Stage, c.PerInstance, c.Total, c.AtLeast, w.PerInstance, w.Total, w.AtLeast)
			}
			if c.Total.OK() {
				learned++
			}
		}
		if p.Name == qwen.Model && learned == 0 {
			t.Errorf("%s: no capacity learned; its prefill saturates over the whole run", p.Name)
		}
	}
}

// TestReportPoolsHTML: the HTML report's pools table carries each pool's
// stage means as the JSON has them, and its verdict.
func TestReportPoolsHTML(t *testing.T) {
	_, in, _, _ := twoPoolRun(t)
	r, err := Build(in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	page, err := r.HTML()
	if err != nil {
		t.Fatal(err)
	}
	html := string(page)
	if len(r.Pools) != 2 {
		t.Fatalf("%d pools", len(r.Pools))
	}
	for i, p := range r.Pools {
		if !strings.Contains(html, fmt.Sprintf(`<tr data-pool="%s" data-stage="%s">`, p.Name, p.Verdict.Class)) {
			t.Errorf("no row for pool %s with its verdict %s", p.Name, p.Verdict.Class)
		}
		for _, s := range p.StageList() {
			cell := fmt.Sprintf(`data-key="pools.%d.stages.%s.requests_per_second" data-value="%s"`, i, s.Key, strconv.FormatFloat(*s.RequestsPerSecond, 'g', -1, 64))
			if !strings.Contains(html, cell) {
				t.Errorf("pool %s %s: no cell %s", p.Name, s.Key, cell)
			}
		}
	}
	md := string(r.Markdown())
	for _, p := range r.Pools {
		if !strings.Contains(md, "| "+p.Name+" |") {
			t.Errorf("the Markdown report has no row for pool %s", p.Name)
		}
	}
}

// liveAdvice is each pool's capacities from the live /api/v1/advice over
// res's ledger.
func liveAdvice(t *testing.T, res *simtest.Result) map[string][]advice.Capacity {
	t.Helper()
	srv := httptest.NewServer((&api.Server{Ledger: res.Ledger}).Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/api/v1/advice")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Pools []advice.PoolAdvice `json:"pools"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	out := map[string][]advice.Capacity{}
	for _, p := range body.Pools {
		out[p.Pool] = p.Advice.Capacities
	}
	return out
}
