package api

import (
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/sim"
	"github.com/ptdmon/ptdmon/internal/sim/simtest"
	"github.com/ptdmon/ptdmon/internal/slo"
)

// within is the oracle: observations ≤ T in h, exact at a bound, linear
// inside the bucket holding T (the first bucket from 0), and the last
// finite bound's count when T lies in +Inf, as histogram_quantile reads
// buckets. It is written apart from internal/slo on purpose.
func within(h engine.Histogram, T float64) float64 {
	lo, below := 0.0, 0.0
	for _, b := range h.Buckets {
		if T <= b.UpperBound {
			if math.IsInf(b.UpperBound, 1) {
				return below
			}
			return below + (T-lo)/(b.UpperBound-lo)*(b.Count-below)
		}
		lo, below = b.UpperBound, b.Count
	}
	return below
}

// TestAdviceSLO serves a ledger filled from the decode-bound simulation of
// vLLM and SGLang engines: the attainment of every SLO, configured or given
// in the query, equals the oracle's over the engines' own bucket increases
// between the window's first and last scrapes, and goodput is the decode
// rate times the product of the fractions.
func TestAdviceSLO(t *testing.T) {
	sc, err := sim.LoadScenario("decode-bound")
	if err != nil {
		t.Fatal(err)
	}
	r, err := simtest.RunHistograms(sc, 1, 90*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	headroom := 0.3
	srv := httptest.NewServer((&Server{Ledger: r.Ledger, SLO: slo.Thresholds{TTFT: 15, ITL: 0.05, E2E: 10}, Headroom: &headroom}).Handler())
	defer srv.Close()
	get := func(q string) (int, []byte) {
		t.Helper()
		resp, err := http.Get(srv.URL + "/api/v1/advice" + q)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, b
	}
	oracle := func(m engine.Metric, T float64) (frac, rate float64) {
		var in, total float64
		for i, inst := range r.Instances {
			if inst.Role != sim.RoleDecode {
				continue
			}
			h, ok := r.Increase(i, m, 86, 90)
			if !ok {
				continue
			}
			in += within(h, T)
			total += h.Count
		}
		return in / total, total / 4
	}
	f := func(query string, th map[string]float64) {
		t.Helper()
		code, b := get(query)
		if code != http.StatusOK {
			t.Fatalf("%s: %d %s", query, code, b)
		}
		var body AdviceBody
		if err := json.Unmarshal(b, &body); err != nil {
			t.Fatalf("%v: %s", err, b)
		}
		if body.SLO == nil || body.SLO.Decode == nil || body.SLO.Prefill == nil {
			t.Fatalf("%s: no attainment: %s", query, b)
		}
		if body.Advice.Headroom != headroom {
			t.Errorf("%s: headroom %g, want the configured %g", query, body.Advice.Headroom, headroom)
		}
		a := body.SLO.Decode
		joint := 1.0
		_, rate := oracle(engine.E2E, 1)
		metrics := map[string]engine.Metric{"ttft": engine.TTFT, "itl": engine.ITL, "e2e": engine.E2E}
		if len(a.Metrics) != len(th) {
			t.Fatalf("%s: %d SLOs, want %d: %s", query, len(a.Metrics), len(th), b)
		}
		for _, m := range a.Metrics {
			want, _ := oracle(metrics[m.Name], th[m.Name])
			if m.Threshold != th[m.Name] || m.Within == nil || math.Abs(m.Within.Fraction-want) > 1e-12 {
				t.Errorf("%s: %s ≤ %g: %+v, want fraction %g", query, m.Name, th[m.Name], m, want)
				continue
			}
			joint *= want
		}
		if math.Abs(a.Rate-rate) > 1e-9 || math.Abs(a.Goodput-rate*joint) > 1e-9 {
			t.Errorf("%s: rate %g goodput %g, want %g and %g", query, a.Rate, a.Goodput, rate, rate*joint)
		}
		// Five phases, and bootstrap from the simulated SGLang's per-stage latency.
		if a.Misses == nil || a.Misses.Dominant == "" || len(a.Misses.Phases) != 6 {
			t.Errorf("%s: misses %+v, want the dominant of six phases", query, a.Misses)
		}
		t.Logf("%s: %s", query, b[strings.Index(string(b), `"slo"`):])
	}
	f("", map[string]float64{"ttft": 15, "itl": 0.05, "e2e": 10})
	f("?e2e=15&ttft=0&itl=0.03", map[string]float64{"itl": 0.03, "e2e": 15})

	for _, bad := range []string{"ttft=-1", "itl=x", "e2e=NaN", "e2e=+Inf"} {
		if code, b := get("?" + bad); code != http.StatusBadRequest || len(b) == 0 {
			t.Errorf("%s: %d %s", bad, code, b)
		}
	}
}

// TestAdviceSLOAbsent: without thresholds, and for a role whose engines
// export no histogram, the attainment is absent with the reason.
func TestAdviceSLOAbsent(t *testing.T) {
	srv := simulatedServer(t, "decode-bound", 1, 20*time.Second)
	resp, err := http.Get(srv.URL + "/api/v1/advice")
	if err != nil {
		t.Fatal(err)
	}
	var body AdviceBody
	err = json.NewDecoder(resp.Body).Decode(&body)
	resp.Body.Close()
	if err != nil || body.SLO != nil || !strings.Contains(body.SLOAbsent, "no SLO threshold") {
		t.Errorf("%v: %+v", err, body)
	}
}
