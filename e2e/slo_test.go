package e2e

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/gen"
	"github.com/ptdmon/ptdmon/internal/slo"
)

// TestSLORulesOnEngines: the real Prometheus scrapes the simulated vLLM
// (FlagCX, NIXL) and SGLang engines, as printed on the wire, with the
// generated scrape config and `ptdmon gen slo` rules. Each recorded
// attainment must equal internal/slo's fraction of the same buckets, read
// back from Prometheus per target and interpolated in Go.
func TestSLORulesOnEngines(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: skipping the 35 s Prometheus run")
	}
	promBin := prometheusBin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 75*time.Second)
	defer cancel()
	cl := startSim(t, ctx, scenario(t), 11, simSpeed)
	cfg := simConfig(cl)
	cfg.SetDefaults()
	in := gen.FromConfig(cfg, cl.BytesPerRequest())
	in.PtdmonAddr = "127.0.0.1:" + freePort(t) // no ptdmon here: the engines path only
	in.RuleFiles = []string{"slo.yml"}
	promCfg, err := gen.PrometheusConfig(in)
	if err != nil {
		t.Fatal(err)
	}
	// Thresholds inside the simulated latencies: TTFT 0.6 s is inside a
	// vLLM bucket and an SGLang bound, ITL 22 ms inside both engines'
	// buckets around the 25 ms step, E2E 7 s inside both.
	const sloWindow = 20 * time.Second
	th := gen.SLOInput{TTFT: 0.6, ITL: 0.022, E2E: 7, Window: sloWindow}
	rules, err := gen.SLORulesYAML(th)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, b := range map[string][]byte{"prometheus.yml": promCfg, "slo.yml": rules} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	started := time.Now()
	promURL := startPrometheus(t, ctx, promBin, dir, filepath.Join(dir, "prometheus.yml"))
	// The rules run every 15 s over 20 s: two evaluations with a full
	// range after 35 s.
	time.Sleep(time.Until(started.Add(35 * time.Second)))

	n := gen.SLORecordNames(strconvDuration(sloWindow))
	fams := gen.DefaultSLOFamilies()
	checked := 0
	for _, s := range []string{"ttft", "itl", "e2e"} {
		// The recorded evaluations of the decode role and their times. A
		// scrape that starts before an evaluation and is appended after it
		// is in a later query at that time but not in the rule's, so one
		// evaluation may differ by a sample on a loaded machine: the rule
		// must equal internal/slo exactly at one of them at least.
		series := queryMatrix(t, promURL, n.Attainment+`{role="decode",slo="`+s+`"}[31s]`, time.Now())
		if len(series) != 1 || len(series[0]) == 0 {
			t.Fatalf("%s: %d recorded decode series", s, len(series))
		}
		threshold := map[string]float64{"ttft": th.TTFT, "itl": th.ITL, "e2e": th.E2E}[s]
		var tried []string
		matched := false
		for k := len(series[0]) - 1; k >= 0 && !matched; k-- {
			ev := series[0][k]
			want := sloAt(t, promURL, fams[s], strconvDuration(sloWindow), threshold, ev.t)
			t.Logf("%s ≤ %gs on decode at %v: recorded %.6f, internal/slo %.6f (exact %v)", s, threshold, ev.t.Format("15:04:05"), ev.v, want.Fraction, want.Exact)
			if k == len(series[0])-1 && (want.Fraction <= 0 || want.Fraction >= 1) {
				t.Errorf("%s: fraction %g: the threshold is outside the latencies", s, want.Fraction)
			}
			matched = math.Abs(ev.v-want.Fraction) <= 1e-9
			tried = append(tried, fmt.Sprintf("%.9f vs %.9f", ev.v, want.Fraction))
		}
		if !matched {
			t.Errorf("%s: recorded attainment never equals internal/slo's: %v", s, tried)
		}
		checked++
	}
	if g := queryMatrix(t, promURL, n.GoodputIndp+`[16s]`, time.Now()); len(g) == 0 {
		t.Error("no goodput recorded")
	}
	if checked != 3 {
		t.Errorf("checked %d SLOs", checked)
	}
}

func sortBuckets(h *slo.Hist) {
	for i := 1; i < len(h.Bounds); i++ {
		for j := i; j > 0 && h.Bounds[j] < h.Bounds[j-1]; j-- {
			h.Bounds[j], h.Bounds[j-1] = h.Bounds[j-1], h.Bounds[j]
			h.Counts[j], h.Counts[j-1] = h.Counts[j-1], h.Counts[j]
		}
	}
}

type vecSample struct {
	labels map[string]string
	v      float64
}

// queryVector runs an instant query at time at.
func queryVector(t *testing.T, promURL, q string, at time.Time) []vecSample {
	t.Helper()
	var out []vecSample
	for _, res := range instantQuery(t, promURL, q, at) {
		out = append(out, vecSample{res.Metric, promSample(t, q, res.Value).v})
	}
	return out
}

// sloAt is internal/slo's attainment from the same buckets per target, as
// Prometheus rates them at t.
func sloAt(t *testing.T, promURL string, fams []gen.SLOFamily, window string, threshold float64, at time.Time) slo.Within {
	t.Helper()
	var hs []slo.Hist
	seen := map[string]bool{}
	for _, f := range fams {
		q := `sum by (ptd_target, le) (rate(` + f.Series + `_bucket{ptd_role="decode"}[` + window + `]))`
		byTarget := map[string]*slo.Hist{}
		for _, v := range queryVector(t, promURL, q, at) {
			tg := v.labels["ptd_target"]
			if seen[tg] {
				continue // an older name of a family this target already exports
			}
			le, err := strconv.ParseFloat(v.labels["le"], 64)
			if err != nil {
				t.Fatalf("le=%q: %v", v.labels["le"], err)
			}
			h := byTarget[tg]
			if h == nil {
				h = &slo.Hist{}
				byTarget[tg] = h
			}
			h.Bounds = append(h.Bounds, le)
			h.Counts = append(h.Counts, v.v)
		}
		for tg, h := range byTarget {
			seen[tg] = true
			sortBuckets(h)
			hs = append(hs, *h)
		}
	}
	want, err := slo.FractionOf(hs, threshold)
	if err != nil {
		t.Fatalf("%v", err)
	}
	return want
}
