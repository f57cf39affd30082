package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/advice"
	"github.com/ptdmon/ptdmon/internal/diagnose"
	"github.com/ptdmon/ptdmon/internal/kvsize"
	"github.com/ptdmon/ptdmon/internal/sim"
	"github.com/ptdmon/ptdmon/internal/sim/simtest"
	"github.com/ptdmon/ptdmon/internal/slo"
	"github.com/ptdmon/ptdmon/internal/testutil"
)

// poolRow is one row of the pools panel as the page shows it.
type poolRow struct {
	Pool      string   `json:"pool"`
	Cells     []string `json:"cells"`
	Stage     string   `json:"stage"`
	KV        string   `json:"kv"`        // the KV cell's req/s alone
	Transfers string   `json:"transfers"` // its transfers/s line
	KVNote    string   `json:"kvNote"`    // the full note on what the KV curve is
}

// TestPoolsPanelInChromium: two pools, a decode-bound vLLM one with its own
// B_request and an SGLang one serving another model without one. The
// page's pools panel shows, for each pool of /api/v1/snapshot, its name,
// model, B_request and source, its req/s over W, its verdict from
// verdict.groups and its SLO attainment, all as the API gives them; the
// pool without a B_request shows its KV req/s absent with the reason.
func TestPoolsPanelInChromium(t *testing.T) {
	testutil.NeedChromium(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	sc, err := sim.LoadScenario("decode-bound")
	must(t, err)
	// Half of llama's requests hit half their prompt on decode: its KV
	// req/s is bytes ÷ B_request, below its transfers/s.
	sc.Groups[0].PrefixHit = sim.PrefixHitSpec{Fraction: 0.5}
	qwen := &sc.Groups[1]
	qwen.Model = "Qwen/Qwen2.5-7B-Instruct"
	qwen.Decode.MaxBatch, qwen.Decode.StepTime = 32, 25*time.Millisecond
	own := map[string]kvsize.Request{sc.Model: {Bytes: sc.KVBytesPerRequest, Basis: "config"}}
	r, err := simtest.RunWith(sc, 1, 60*time.Second, simtest.Options{PoolRequests: own})
	must(t, err)
	srvURL := serveLedger(t, r.Ledger, slo.Thresholds{TTFT: 15, E2E: 12})

	// The ground truth: the snapshot the panel reads (the ledger no longer
	// moves).
	resp, err := http.Get(srvURL + "/api/v1/snapshot?instances=0")
	must(t, err)
	type rates struct {
		Window *float64          `json:"requests_per_second_window"`
		Absent map[string]string `json:"absent"`
	}
	var snap struct {
		Pools []struct {
			Name    string `json:"name"`
			Model   string `json:"model"`
			Prefill rates  `json:"prefill"`
			KV      struct {
				rates
				Transfers *float64 `json:"transfers_per_second"`
			} `json:"kv"`
			KVNote string            `json:"kv_note"`
			Decode rates             `json:"decode"`
			SLO    *advice.SLOReport `json:"slo"`
			Router struct {
				Arrival *float64          `json:"arrival_per_second"`
				Absent  map[string]string `json:"absent"`
			} `json:"router"`
		} `json:"pools"`
		Verdict *diagnose.Verdict `json:"verdict"`
	}
	err = json.NewDecoder(resp.Body).Decode(&snap)
	resp.Body.Close()
	must(t, err)
	if len(snap.Pools) != 2 || snap.Verdict == nil {
		t.Fatalf("snapshot: %d pools, verdict %v", len(snap.Pools), snap.Verdict)
	}

	b := startBrowser(t, ctx)
	must(t, navigate(b, srvURL+"/"))
	var rows []poolRow
	testutil.Eventually(t, 30*time.Second, 300*time.Millisecond, func() (bool, string) {
		js := `JSON.stringify([...document.querySelectorAll("#pools tr[data-pool]")].map((tr) => ({
			pool: tr.dataset.pool, cells: [...tr.cells].map((td) => td.textContent),
			stage: tr.querySelector("td[data-verdict]").dataset.verdict,
			kv: tr.querySelector("td[data-stage=kv]").firstChild.textContent,
			transfers: tr.querySelector("td[data-stage=kv] .sub")?.textContent || "",
			kvNote: tr.querySelector("td[data-stage=kv] .kv-note")?.title || ""})))`
		rows = nil
		if err := json.Unmarshal([]byte(b.eval(t, js)), &rows); err != nil {
			return false, err.Error()
		}
		return len(rows) == 2, fmt.Sprintf("%d pool rows", len(rows))
	})
	headlines := map[string]string{}
	stages := map[string]string{}
	for _, g := range snap.Verdict.Groups {
		headlines[g.Group], stages[g.Group] = g.Headline, string(g.Class)
	}
	rate := func(v *float64) string {
		if v == nil {
			return "nil"
		}
		// As JavaScript's toFixed(2) rounds: a tie goes up.
		return strconv.FormatFloat(math.Floor(*v*100+0.5)/100, 'f', 2, 64)
	}
	for i, p := range snap.Pools {
		row := rows[i]
		if row.Pool != p.Name || len(row.Cells) != 9 {
			t.Fatalf("row %d: %+v, want pool %s in 9 cells", i, row, p.Name)
		}
		c := row.Cells
		if c[0] != p.Name || c[1] != p.Model {
			t.Errorf("%s: name %q, model %q; want %q", p.Name, c[0], c[1], p.Model)
		}
		// No router in front of the pools: the arrival rate is absent
		// with the API's reason, never 0.
		if why := p.Router.Absent["arrival_per_second"]; p.Router.Arrival != nil || why == "" || c[3] != "absent: "+why {
			t.Errorf("%s: arrival %q; want absent: %q", p.Name, c[3], why)
		}
		if p.Prefill.Window == nil || c[4] != rate(p.Prefill.Window) || c[6] != rate(p.Decode.Window) {
			t.Errorf("%s: prefill %q, decode %q; want %s and %s", p.Name, c[4], c[6], rate(p.Prefill.Window), rate(p.Decode.Window))
		}
		if p.Name == sc.Model {
			if !strings.Contains(c[2], "(config)") || row.KV != rate(p.KV.Window) {
				t.Errorf("%s: B_request %q, KV %q; want its own from config and %s req/s", p.Name, c[2], row.KV, rate(p.KV.Window))
			}
			if p.KV.Transfers == nil || row.Transfers != rate(p.KV.Transfers)+" transfers/s" {
				t.Errorf("%s: transfers %q, want %s transfers/s beside KV req/s", p.Name, row.Transfers, rate(p.KV.Transfers))
			}
			if p.KVNote == "" || row.KVNote != p.KVNote {
				t.Errorf("%s: KV note %q, want the API's %q", p.Name, row.KVNote, p.KVNote)
			}
		} else {
			why := p.KV.Absent["requests_per_second_window"]
			if c[2] != "not set" || why == "" || row.KV != "absent: "+why {
				t.Errorf("%s: B_request %q, KV %q; want not set and absent: %q", p.Name, c[2], row.KV, why)
			}
			// Transfers are counted whatever B_request is.
			if p.KV.Transfers == nil || row.Transfers != rate(p.KV.Transfers)+" transfers/s" {
				t.Errorf("%s: transfers %q, want %s transfers/s", p.Name, row.Transfers, rate(p.KV.Transfers))
			}
		}
		if c[7] != headlines[p.Name] || row.Stage != stages[p.Name] {
			t.Errorf("%s: verdict %q (%s), want %q (%s)", p.Name, c[7], row.Stage, headlines[p.Name], stages[p.Name])
		}
		if p.SLO == nil || p.SLO.Request == nil {
			t.Fatalf("%s: no whole-request SLO attainment in the snapshot", p.Name)
		}
		for _, m := range p.SLO.Request.Metrics {
			v := "?"
			switch {
			case m.Within != nil:
				v = pct(m.Within.Fraction)
			case m.Bound != nil && m.Bound.Min == m.Bound.Max:
				v = pct(m.Bound.Min)
			case m.Bound != nil:
				v = pct(m.Bound.Min) + "–" + pct(m.Bound.Max)
			}
			want := fmt.Sprintf("%s %s", strings.ToUpper(m.Name), v)
			if !strings.Contains(c[8], want) {
				t.Errorf("%s: SLO %q lacks %q", p.Name, c[8], want)
			}
		}
	}
	t.Logf("pools panel: %q", rows)
	if errs := b.exceptions(); len(errs) > 0 {
		t.Errorf("uncaught exceptions in the page: %q", errs)
	}
}

// pct is fmt.js's pct: 0 decimals at 0 and from 99.5%, else 1.
func pct(v float64) string {
	if v >= 0.995 || v == 0 {
		return fmt.Sprintf("%.0f%%", v*100)
	}
	return fmt.Sprintf("%.1f%%", v*100)
}

// TestPoolsPanelOnePool: a deployment of one pool shows the panel only
// when a router stands in front of it, since the arrival rate the router
// counts is nowhere else on the page; the row's arrival and decode-only
// rates are the API's. Without a router the panel stays hidden.
func TestPoolsPanelOnePool(t *testing.T) {
	testutil.NeedChromium(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	b := startBrowser(t, ctx)
	f := func(router string) {
		t.Helper()
		sc, err := sim.LoadScenario("balanced")
		must(t, err)
		sc.Groups = sc.Groups[:1]
		sc.Groups[0].Router, sc.Groups[0].DecodeOnlyFraction = router, 0.4
		r, err := simtest.RunWith(sc, 3, 40*time.Second, simtest.Options{})
		must(t, err)
		srvURL := serveLedger(t, r.Ledger, slo.Thresholds{})
		resp, err := http.Get(srvURL + "/api/v1/snapshot?instances=0")
		must(t, err)
		var snap struct {
			Pools []struct {
				Name   string `json:"name"`
				Router struct {
					Arrival    *float64 `json:"arrival_per_second"`
					DecodeOnly *float64 `json:"decode_only_per_second"`
				} `json:"router"`
			} `json:"pools"`
		}
		err = json.NewDecoder(resp.Body).Decode(&snap)
		resp.Body.Close()
		must(t, err)
		if len(snap.Pools) != 1 {
			t.Fatalf("router %q: %d pools, want 1", router, len(snap.Pools))
		}
		p := snap.Pools[0]
		if (p.Router.Arrival != nil) != (router != "") {
			t.Fatalf("router %q: the API's arrival is %v", router, p.Router.Arrival)
		}
		must(t, navigate(b, srvURL+"/"))
		type panel struct {
			Pools  string   `json:"pools"`
			Hidden bool     `json:"hidden"`
			Rows   []string `json:"rows"`
			Cell   string   `json:"cell"`
			Sub    string   `json:"sub"`
		}
		var got panel
		testutil.Eventually(t, 30*time.Second, 300*time.Millisecond, func() (bool, string) {
			js := `(() => { const el = document.getElementById("pools");
				const td = el.querySelector("td[data-stage=arrival]");
				return JSON.stringify({ pools: el.dataset.pools || "", hidden: el.hidden,
					rows: [...el.querySelectorAll("tr[data-pool]")].map((tr) => tr.dataset.pool),
					cell: td ? td.firstChild.textContent : "", sub: td?.querySelector(".sub")?.textContent || "" }); })()`
			got = panel{}
			if err := json.Unmarshal([]byte(b.eval(t, js)), &got); err != nil {
				return false, err.Error()
			}
			return got.Pools == "1", fmt.Sprintf("the panel has not rendered the snapshot: %+v", got)
		})
		rate := func(v float64) string { return strconv.FormatFloat(math.Floor(v*100+0.5)/100, 'f', 2, 64) }
		if router == "" {
			if !got.Hidden || len(got.Rows) != 0 {
				t.Errorf("one pool without a router: the panel shows %+v, want it hidden", got)
			}
			return
		}
		if got.Hidden || len(got.Rows) != 1 || got.Rows[0] != p.Name {
			t.Fatalf("one pool behind %s: the panel %+v, want one row for %s", router, got, p.Name)
		}
		if got.Cell != rate(*p.Router.Arrival) || p.Router.DecodeOnly == nil || got.Sub != rate(*p.Router.DecodeOnly)+" decode-only/s" {
			t.Errorf("arrival %q (%q), want the API's %s with %v decode-only/s", got.Cell, got.Sub, rate(*p.Router.Arrival), p.Router.DecodeOnly)
		}
	}
	f("")
	f("llm-d-epp")
	if errs := b.exceptions(); len(errs) > 0 {
		t.Errorf("uncaught exceptions in the page: %q", errs)
	}
}
