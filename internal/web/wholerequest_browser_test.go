package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ptdmon/ptdmon/internal/api"
	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/sim"
	"github.com/ptdmon/ptdmon/internal/sim/simtest"
	"github.com/ptdmon/ptdmon/internal/slo"
	"github.com/ptdmon/ptdmon/internal/testutil"
	"github.com/ptdmon/ptdmon/internal/web"
)

// TestWholeRequestOnPage serves the decode-bound simulation of a vLLM pool
// (two legs) and an SGLang pool whose decode batch limit alone is given
// (max_num_seqs), so that the SGLang pool knows its decode count while the
// deployment's is unknown. The advice panel
// shows the whole request's attainment as /api/v1/advice's slo.request
// gives it (a range where only bounded), never the decode leg's, and each
// pool's prefill advice; each pool's "Where TTFT goes" chart says which
// TTFT it draws, has an untimed band, and spans the same time as the
// other charts. The panels that arrive after the page loads leave the
// stage rates above the fold of a 1400×1000 window, a line or two below
// where they were first drawn. An
// advice the API refuses shows the API's answer.
func TestWholeRequestOnPage(t *testing.T) {
	testutil.NeedChromium(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	sc, err := sim.LoadScenario("decode-bound")
	must(t, err)
	// Below saturation: decode saturates after the first minute.
	sc.SetTotalRate(0.6 * sc.TotalRate())
	r, err := simtest.RunWith(sc, 1, 150*time.Second, simtest.Options{Targets: func(ts []engine.Target) {
		for i := range ts {
			if ts[i].Role == engine.Decode && ts[i].Engine == engine.SGLang {
				ts[i].Labels = map[string]string{ledger.LabelMaxNumSeqs: "16"}
			}
		}
	}})
	must(t, err)
	s := &api.Server{Ledger: r.Ledger, SLO: slo.Thresholds{TTFT: 20, E2E: 15}, Extra: web.Routes()}
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(func() { s.CloseStreams(); srv.Close() })
	srvURL := srv.URL

	var body api.AdviceBody
	getJSON(t, srvURL+"/api/v1/advice", &body)
	if body.SLO == nil || body.SLO.Request == nil {
		t.Fatalf("no whole-request attainment: %+v", body.SLO)
	}
	var snap api.Snapshot
	getJSON(t, srvURL+"/api/v1/snapshot?instances=0", &snap)

	b := startBrowser(t, ctx)
	_, err = chromedp.Run(b.ctx, chromedp.EmulateViewport(1400, 1000))
	must(t, err)
	must(t, navigate(b, srvURL+"/"))
	// Where the stage rates are drawn at first: the panels that arrive
	// later (pools, failures, phases) must not move them below the fold.
	const rateTop = `(() => { const c = document.getElementById("chart-rates"); return c ? c.getBoundingClientRect().top : -1; })()`
	var top0 float64
	testutil.Eventually(t, 20*time.Second, 50*time.Millisecond, func() (bool, string) {
		var err error
		top0, err = chromedp.Run(b.ctx, chromedp.Evaluate[float64](rateTop))
		must(t, err)
		return top0 >= 0, "no stage-rate chart yet"
	})
	type page struct {
		SLO     map[string]string `json:"slo"`
		ByPool  string            `json:"byPool"`
		Text    string            `json:"text"`
		Sources map[string]string `json:"sources"`
		Labels  []string          `json:"labels"`
		Phases  [2]float64        `json:"phases"`
		Rates   [2]float64        `json:"rates"`
	}
	const js = `(() => { const a = document.getElementById("advice");
		const slo = {}; for (const e of a.querySelectorAll("[data-slo]")) slo[e.dataset.slo] = e.textContent;
		const sources = {}; let labels = [], phases = [0, 0];
		for (const e of document.querySelectorAll("[data-phases-pool]")) {
			sources[e.dataset.phasesPool] = e.dataset.ttftSource || "";
			labels = e._u.series.map((s) => s.label || "");
			phases = [e._u.scales.x.min, e._u.scales.x.max];
		}
		const u = document.getElementById("chart-rates")._u;
		return JSON.stringify({ slo, byPool: a.querySelector("[data-by-pool=decode]")?.textContent || "", text: a.textContent,
			sources, labels, phases, rates: [u.scales.x.min, u.scales.x.max] }); })()`
	var p page
	testutil.Eventually(t, 30*time.Second, 300*time.Millisecond, func() (bool, string) {
		p = page{}
		if err := json.Unmarshal([]byte(b.eval(t, js)), &p); err != nil {
			return false, err.Error()
		}
		return p.SLO["ttft"] != "" && len(p.Sources) == len(snap.Pools), fmt.Sprintf("the page has not drawn the advice and the phases: %+v", p)
	})
	for _, m := range body.SLO.Request.Metrics {
		want := "?"
		switch {
		case m.Within != nil:
			want = pct(m.Within.Fraction)
		case m.Bound != nil && m.Bound.Min == m.Bound.Max:
			want = pct(m.Bound.Min)
		case m.Bound != nil:
			want = pct(m.Bound.Min) + "–" + pct(m.Bound.Max)
		}
		if p.SLO[m.Name] != want {
			t.Errorf("%s attainment %q, want the whole request's %q: %s", m.Name, p.SLO[m.Name], want, p.Text)
		}
	}
	if !strings.Contains(p.Text, "whole request") {
		t.Errorf("the SLO line does not say it is the whole request's: %s", p.Text)
	}
	if body.Advice.Decode.Instances.OK() {
		t.Fatalf("the deployment's decode count is known: the case is not the one tested")
	}
	known := 0
	for _, pa := range body.Pools {
		if st := pa.Advice.Decode; st.Instances.OK() {
			known++
			if want := fmt.Sprintf("%s %g (now %d)", pa.Pool, st.Instances.V, st.Current); !strings.Contains(p.ByPool, want) {
				t.Errorf("decode by pool %q lacks %q", p.ByPool, want)
			}
		}
	}
	if known == 0 {
		t.Errorf("no pool knows its decode count: %+v", body.Pools)
	}
	for _, pool := range snap.Pools {
		if want := pool.TTFTPhases.TTFTSource; want == "" || p.Sources[pool.Name] != want {
			t.Errorf("%s: the chart's TTFT from %q, the API's %q", pool.Name, p.Sources[pool.Name], want)
		}
	}
	if !strings.Contains(strings.Join(p.Labels, ","), "untimed") || !strings.Contains(strings.Join(p.Labels, ","), "TTFT, whole request") {
		t.Errorf("phases chart series %q: want an untimed band and the whole request's TTFT", p.Labels)
	}
	if math.Abs(p.Phases[0]-p.Rates[0]) > 1 || math.Abs(p.Phases[1]-p.Rates[1]) > 5 {
		t.Errorf("the phases chart spans %v, the rates chart %v: want the same time axis", p.Phases, p.Rates)
	}
	top1, err := chromedp.Run(b.ctx, chromedp.Evaluate[float64](rateTop))
	must(t, err)
	// The verdict's evidence and the advice take a line or two more once
	// they arrive; the pools, failures and phases take hundreds of pixels,
	// under the charts.
	if top1-top0 > 100 || top1+300 > 1000 {
		t.Errorf("the stage-rate chart's top moved from %g to %g px as the panels arrived, in a window 1000 px high", top0, top1)
	}
	// At 900 px the tiles' units stay whole: "req/s over 5 s" is on the
	// value's line or entirely on the next, never broken inside.
	_, err = chromedp.Run(b.ctx, chromedp.EmulateViewport(900, 1000))
	must(t, err)
	if broken := b.eval(t, `JSON.stringify([...document.querySelectorAll(".big .u")].filter((e) => e.getClientRects().length > 1).map((e) => e.textContent))`); broken != "[]" {
		t.Errorf("at 900 px the tiles' units break across lines: %s", broken)
	}
	if errs := b.exceptions(); len(errs) > 0 {
		t.Errorf("uncaught exceptions in the page: %q", errs)
	}
	t.Logf("advice panel: %s; the stage rates at %g px", p.Text, top1)

	// An advice the API refuses: the panel says the API's answer.
	const why = "lookback=\"x\": want a duration > 0 (e.g. 60s)"
	h := s.Handler()
	refuse := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/v1/advice" {
			http.Error(w, why, http.StatusBadRequest)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(refuse.Close)
	must(t, navigate(b, refuse.URL+"/"))
	testutil.Eventually(t, 20*time.Second, 300*time.Millisecond, func() (bool, string) {
		text := b.eval(t, `document.getElementById("advice").textContent`)
		return strings.Contains(text, why), fmt.Sprintf("the advice panel reads %q", text)
	})
}

// TestKVTileNamesPoolsLeftOut: in the trtllm scenario the TensorRT-LLM
// pool's KV is not counted, so KV req/s reads below prefill's under a
// balanced verdict; the KV tile says which pool it leaves out, in view,
// as the snapshot's pools give it.
func TestKVTileNamesPoolsLeftOut(t *testing.T) {
	testutil.NeedChromium(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sc, err := sim.LoadScenario("trtllm")
	must(t, err)
	r, err := simtest.RunHistograms(sc, 1, 30*time.Second)
	must(t, err)
	srvURL := serveLedger(t, r.Ledger, slo.Thresholds{})
	var snap api.Snapshot
	getJSON(t, srvURL+"/api/v1/snapshot?instances=0", &snap)
	var out []string
	for _, p := range snap.Pools {
		if !p.KV.Window.OK() {
			out = append(out, p.Name)
		}
	}
	if len(out) == 0 || len(out) == len(snap.Pools) {
		t.Fatalf("the case is not the one tested: pools without KV req/s %v of %d", out, len(snap.Pools))
	}
	b := startBrowser(t, ctx)
	must(t, navigate(b, srvURL+"/"))
	var note string
	testutil.Eventually(t, 20*time.Second, 200*time.Millisecond, func() (bool, string) {
		note = b.eval(t, `document.querySelector("#big-k .pools-note")?.textContent || ""`)
		return note != "", "the KV tile names no pool"
	})
	want := fmt.Sprintf("%d of %d pools; not %s", len(snap.Pools)-len(out), len(snap.Pools), strings.Join(out, ", "))
	if note != want {
		t.Errorf("KV tile note %q, want %q", note, want)
	}
}

// TestRestartInView: in the restart scenario after both restarts, the top
// row says how many scrapes failed and which targets restarted, as the
// snapshot's scrape_health gives them, above the fold.
func TestRestartInView(t *testing.T) {
	testutil.NeedChromium(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sc, err := sim.LoadScenario("restart")
	must(t, err)
	r, err := simtest.RunHistograms(sc, 1, 50*time.Second)
	must(t, err)
	srvURL := serveLedger(t, r.Ledger, slo.Thresholds{})
	var snap api.Snapshot
	getJSON(t, srvURL+"/api/v1/snapshot?instances=0", &snap)
	h := snap.ScrapeHealth
	failed := uint64(0)
	for _, n := range h.Failures {
		failed += n
	}
	if failed == 0 || strings.Join(h.Restarted, ",") != "sglang-d0,vllm-p0" {
		t.Fatalf("scrape health %+v: want failed scrapes and the two restarts", h)
	}
	b := startBrowser(t, ctx)
	_, err = chromedp.Run(b.ctx, chromedp.EmulateViewport(1400, 1000))
	must(t, err)
	must(t, navigate(b, srvURL+"/"))
	type note struct {
		Failed, Restarted, Text string
		Bottom                  float64
	}
	var got note
	testutil.Eventually(t, 20*time.Second, 200*time.Millisecond, func() (bool, string) {
		got, err = chromedp.Run(b.ctx, chromedp.Evaluate[note](`(() => { const e = document.getElementById("scrape-health");
			return e ? { Failed: e.dataset.failed, Restarted: e.dataset.restarted, Text: e.textContent, Bottom: e.getBoundingClientRect().bottom } : {}; })()`))
		must(t, err)
		return got.Text != "", "no scrape health in the top row"
	})
	if got.Failed != fmt.Sprint(failed) || got.Restarted != "sglang-d0,vllm-p0" || got.Bottom > 1000 || !strings.Contains(got.Text, "restarted: sglang-d0, vllm-p0") {
		t.Errorf("top row %+v; want %d failed scrapes and sglang-d0, vllm-p0 restarted, above the fold", got, failed)
	}
}

// serveLedger serves the API and the page over l (with the SLO
// thresholds th) until the test ends, and returns the server's URL.
func serveLedger(t *testing.T, l *ledger.Ledger, th slo.Thresholds) string {
	t.Helper()
	s := &api.Server{Ledger: l, SLO: th, Extra: web.Routes()}
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(func() { s.CloseStreams(); srv.Close() })
	return srv.URL
}
