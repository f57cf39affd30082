package web_test

// The KV failure panel in a real headless Chromium: two pools over the real
// ledger and API, one whose vLLM connectors count network failures and
// expired leases at known rates and whose decode recomputes a known share
// of its prompt tokens, one whose sources count none.

import (
	"context"
	"fmt"
	"math"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ptdmon/ptdmon/internal/api"
	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/testutil"
	"github.com/ptdmon/ptdmon/internal/web"
)

func TestFailurePanelInChromium(t *testing.T) {
	testutil.NeedChromium(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	l := ledger.New(ledger.Config{Window: 5 * time.Second})
	chat, batch := map[string]string{"ptd_pool": "chat"}, map[string]string{"ptd_pool": "batch"}
	l.SetTargets([]engine.Target{
		{Name: "chat-p0", URL: "http://127.0.0.1:9/metrics", Role: engine.Prefill, Engine: engine.VLLM, Labels: chat},
		{Name: "chat-d0", URL: "http://127.0.0.1:9/metrics", Role: engine.Decode, Engine: engine.VLLM, Labels: chat},
		{Name: "batch-p0", URL: "http://127.0.0.1:9/metrics", Role: engine.Prefill, Engine: engine.VLLM, Labels: batch},
		{Name: "chat-r0", URL: "http://127.0.0.1:9/metrics", Role: engine.Router, Engine: engine.LLMDEPP, Labels: chat},
	})
	// Per second: 90 transfers, 6 network failures and 4 expired leases
	// (6% and 4% of 100 attempted); decode computes 1,000 of its 5,000
	// prompt tokens (20%).
	start := time.Now().Add(-20 * time.Second).Truncate(time.Second)
	for k := 0; k <= 20; k++ {
		now, s := start.Add(time.Duration(k)*time.Second), float64(k)
		cv := func(m engine.Metric, v float64) engine.CounterValue {
			return engine.CounterValue{Metric: m, Series: uint64(m) + 1, Value: v * s}
		}
		// Phases: 4 observations a second of the mean given.
		hist := func(o *engine.Observation, m engine.Metric, mean float64) {
			n := 4 * s
			o.Histograms[m.HistogramIndex()] = engine.Histogram{Buckets: []engine.Bucket{{UpperBound: 10, Count: n}, {UpperBound: math.Inf(1), Count: n}},
				Sum: mean * n, Count: n, HasSum: true, HasCount: true, Present: true}
		}
		p0 := &engine.Observation{Engine: engine.VLLM, Role: engine.Prefill, Counters: []engine.CounterValue{
			cv(engine.Completed, 3), cv(engine.KVTransfers, 90), cv(engine.KVFailNetwork, 6), cv(engine.KVExpired, 4)}}
		hist(p0, engine.QueueTime, 0.2)
		hist(p0, engine.PrefillTime, 0.5)
		d0 := &engine.Observation{Engine: engine.VLLM, Role: engine.Decode, Counters: []engine.CounterValue{
			cv(engine.Completed, 3), cv(engine.PromptTokens, 5000), cv(engine.PromptTokensComputed, 1000)}}
		hist(d0, engine.KVXferTime, 0.125)
		hist(d0, engine.ITL, 0.025)
		hist(d0, engine.TTFT, 1.1)
		// chat's router: 0.1 s in flow control's queue, and a prefill leg
		// of 0.8 s as a router times it.
		r0 := &engine.Observation{Engine: engine.LLMDEPP, Role: engine.Router, Counters: []engine.CounterValue{cv(engine.RouterRequests, 3)}}
		hist(r0, engine.RouterQueueTime, 0.1)
		hist(r0, engine.PrefillLegTime, 0.8)
		l.Record(ledger.Scrape{Target: "chat-r0", Time: now, Obs: r0})
		l.Record(ledger.Scrape{Target: "chat-p0", Time: now, Obs: p0})
		l.Record(ledger.Scrape{Target: "chat-d0", Time: now, Obs: d0})
		l.Record(ledger.Scrape{Target: "batch-p0", Time: now, Obs: &engine.Observation{Engine: engine.VLLM, Role: engine.Prefill, Counters: []engine.CounterValue{
			cv(engine.Completed, 2)}}})
		l.Tick(now)
	}
	s := &api.Server{Ledger: l, Extra: web.Routes()}
	srv := httptest.NewServer(s.Handler())
	defer func() { s.CloseStreams(); srv.Close() }()

	b := startBrowser(t, ctx)
	must(t, chromedp.Do(b.ctx, chromedp.Navigate(srv.URL+"/")))
	type kindCell struct{ Kind, Text, Title string }
	type panel struct {
		Counted string
		Pools   map[string][]kindCell
		Text    string
	}
	const js = `(() => { const el = document.getElementById("failures"); if (!el) return { Counted: "", Pools: {}, Text: "" };
		const pools = {};
		for (const tr of el.querySelectorAll("tr[data-pool]")) pools[tr.dataset.pool] = [...tr.querySelectorAll("td[data-kind]")].map((td) => ({ Kind: td.dataset.kind, Text: td.textContent, Title: td.title }));
		return { Counted: el.dataset.counted || "", Pools: pools, Text: el.textContent }; })()`
	var p panel
	testutil.Eventually(t, 20*time.Second, 250*time.Millisecond, func() (bool, string) {
		var err error
		p, err = chromedp.Run(b.ctx, chromedp.Evaluate[panel](js))
		must(t, err)
		return p.Counted == "1" && len(p.Pools) == 2, fmt.Sprintf("the failure panel shows no pools: %+v", p)
	})
	want := map[string]map[string]string{
		"chat":  {"network": "6.0%", "timeout": "—", "expiry": "4.0%", "notification": "—", "unclassified": "—", "recomputed_on_decode": "20.0%", "shed": "—", "migrated": "—"},
		"batch": {"network": "—", "timeout": "—", "expiry": "—", "notification": "—", "unclassified": "—", "recomputed_on_decode": "—", "shed": "—", "migrated": "—"},
	}
	for pool, kinds := range want {
		cells := p.Pools[pool]
		if len(cells) != len(kinds) {
			t.Errorf("pool %s: %d kinds, want %d: %+v", pool, len(cells), len(kinds), cells)
			continue
		}
		for _, c := range cells {
			if c.Text != kinds[c.Kind] {
				t.Errorf("pool %s, %s: %q, want %q", pool, c.Kind, c.Text, kinds[c.Kind])
			}
			// An absent kind says why; a present one its rate.
			if c.Text == "—" && !strings.Contains(c.Title, "no ") || c.Text != "—" && !strings.Contains(c.Title, "/s") {
				t.Errorf("pool %s, %s: title %q", pool, c.Kind, c.Title)
			}
		}
	}
	if c := p.Pools["chat"]; len(c) > 1 && !strings.Contains(c[1].Title, "SGLang does") {
		t.Errorf("chat's timeout is absent without its reason: %q", c[1].Title)
	}

	// Where TTFT goes: the chat pool's stacked chart, each phase's own
	// mean in its legend (the router's first), bootstrap and the
	// hand-over absent with their reasons, the router's prefill leg a
	// line at its end; batch has no phase at all.
	type phaseChart struct {
		Legend  map[string]string
		Absent  string
		Text    string
		Canvas  bool
		Stacked []float64
		LegEnd  float64
	}
	const phasesJS = `(() => { const out = {}; for (const el of document.querySelectorAll("[data-phases-pool]")) {
		const legend = {}; for (const tr of el.querySelectorAll(".u-legend .u-series")) { const l = tr.querySelector(".u-label"); if (l) legend[l.textContent] = tr.querySelector(".u-value").textContent; }
		const d = el._u.data; const last = d[0].length - 1;
		out[el.dataset.phasesPool] = { Legend: legend, Absent: el.dataset.absent || "", Text: el.textContent, Canvas: !!el.querySelector("canvas"),
			Stacked: last < 0 ? [] : d.slice(1, 8).map((c) => c[last] == null ? -1 : c[last]), LegEnd: last < 0 || d[10][last] == null ? -1 : d[10][last] }; } return out; })()`
	var charts map[string]phaseChart
	testutil.Eventually(t, 20*time.Second, 250*time.Millisecond, func() (bool, string) {
		var err error
		charts, err = chromedp.Run(b.ctx, chromedp.Evaluate[map[string]phaseChart](phasesJS))
		must(t, err)
		return len(charts["chat"].Stacked) == 7, fmt.Sprintf("no phase chart for chat: %+v", charts)
	})
	chatPh := charts["chat"]
	for label, want := range map[string]string{"router": "100 ms", "queue": "200 ms", "prefill": "500 ms", "bootstrap + alloc": "absent", "hand-over": "absent",
		"KV transfer": "125 ms", "first decode step": "25.0 ms", "prefill leg's end (router)": "800 ms",
		// Decode's 1.1 s is the decode leg's alone, never the request's: the
		// whole request's TTFT is absent here, and so what it leaves untimed.
		"TTFT, whole request": "absent", "untimed": "absent"} {
		if got := chatPh.Legend[label]; got != want {
			t.Errorf("chat's %s phase reads %q, want %q (legend %v)", label, got, want, chatPh.Legend)
		}
	}
	// Stacked: 0.1, 0.3, 0.8, (absent twice: the stack stays at 0.8),
	// 0.925, 0.95; the prefill leg ends at the router's 0.1 + its 0.8.
	for i, want := range []float64{0.1, 0.3, 0.8, 0.8, 0.8, 0.925, 0.95} {
		if math.Abs(chatPh.Stacked[i]-want) > 1e-9 {
			t.Errorf("chat's stack at phase %d is %v, want %v (%v)", i, chatPh.Stacked[i], want, chatPh.Stacked)
		}
	}
	if math.Abs(chatPh.LegEnd-0.9) > 1e-9 {
		t.Errorf("chat's prefill leg ends at %v, want 0.9", chatPh.LegEnd)
	}
	if chatPh.Absent != "bootstrap_seconds,handover_seconds,untimed_seconds" || !strings.Contains(chatPh.Text, "SGLang's per-stage bootstrap") ||
		!strings.Contains(chatPh.Text, "the decode instances time the decode leg only") || !chatPh.Canvas {
		t.Errorf("chat's absent phases %q, text %q, canvas %v", chatPh.Absent, chatPh.Text, chatPh.Canvas)
	}
	if _, ok := charts["batch"]; ok {
		t.Errorf("a phase chart for batch, which exports no phase")
	}
	if none := b.eval(t, `document.querySelector("[data-phases-none]").dataset.phasesNone`); none != "batch" {
		t.Errorf("pools named without phases %q, want batch", none)
	}
	if errs := b.exceptions(); len(errs) > 0 {
		t.Errorf("uncaught exceptions in the page: %q", errs)
	}
}
