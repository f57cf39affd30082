package gen

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/promql/parser"

	"github.com/ptdmon/ptdmon/internal/slo"
)

// sloTarget is one engine's histogram in the promtool test: per-step bucket
// increases (cumulative over le) and how its le values are printed.
type sloTarget struct {
	name, role, series string
	bounds, inc        []float64 // finite bounds; inc has one more (+Inf)
	pythonLE           bool      // 1.0 rather than 1
}

func (s sloTarget) hist() slo.Hist {
	return slo.Hist{Bounds: append(append([]float64(nil), s.bounds...), math.Inf(1)), Counts: s.inc}
}

// cumulative turns per-bucket counts into cumulative ones.
func cumulative(per ...float64) []float64 {
	out := make([]float64, len(per))
	sum := 0.0
	for i, v := range per {
		sum += v
		out[i] = sum
	}
	return out
}

// promRound is PromQL's round(v, to).
func promRound(v, to float64) float64 {
	inv := 1 / to
	return math.Floor(v*inv+0.5) / inv
}

func promFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// TestSLORulesAgainstPrometheus evaluates the generated SLO rules with
// promtool on bucket series of a vLLM and an SGLang decode engine (le
// printed as Python prints it, and as Go does) and compares every
// attainment with internal/slo's fraction of the same buckets. A second
// oracle is Prometheus' own histogram_quantile: at the fraction internal/slo
// computes for a threshold inside a bucket, it must return the threshold.
func TestSLORulesAgainstPrometheus(t *testing.T) {
	bin := promtool(t)
	// Spread so that every threshold below lands in a bucket with
	// observations: exact (0.5 is a vLLM TTFT bound), inside a bucket,
	// below the first bound, above the last finite one.
	vllmTTFT := make([]float64, len(vllmTTFTBounds)+1)
	for i := range vllmTTFT {
		vllmTTFT[i] = float64(3 + (i*7)%11)
	}
	sglTTFT := make([]float64, len(sglangTTFTBounds)+1)
	for i := range sglTTFT {
		sglTTFT[i] = float64(2 + (i*5)%9)
	}
	e2eV := make([]float64, len(vllmE2EBounds)+1)
	for i := range e2eV {
		e2eV[i] = float64(1 + (i*3)%7)
	}
	e2eS := make([]float64, len(sglangE2EBounds)+1)
	for i := range e2eS {
		e2eS[i] = float64(4 + (i*2)%5)
	}
	targets := []sloTarget{
		{"d0", "decode", "vllm:time_to_first_token_seconds", vllmTTFTBounds, cumulative(vllmTTFT...), true},
		{"d1", "decode", "sglang:time_to_first_token_seconds", sglangTTFTBounds, cumulative(sglTTFT...), false},
		{"d0", "decode", "vllm:e2e_request_latency_seconds", vllmE2EBounds, cumulative(e2eV...), true},
		{"d1", "decode", "sglang:e2e_request_latency_seconds", sglangE2EBounds, cumulative(e2eS...), false},
	}
	f := func(name string, ttft, e2e float64) {
		t.Run(name, func(t *testing.T) {
			in := SLOInput{TTFT: ttft, E2E: e2e, Window: time.Minute}
			rf, err := SLORules(in)
			if err != nil {
				t.Fatal(err)
			}
			for _, g := range rf.Groups {
				for _, r := range g.Rules {
					if _, err := parser.NewParser(parser.Options{}).ParseExpr(r.Expr); err != nil {
						t.Fatalf("%s: %v\n%s", r.Record, err, r.Expr)
					}
				}
			}
			dir := t.TempDir()
			b, err := SLORulesYAML(in)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "slo.yml"), b, 0o644); err != nil {
				t.Fatal(err)
			}
			runPromtool(t, bin, "check", "rules", filepath.Join(dir, "slo.yml"))

			var series []string
			for ti, tg := range targets {
				les := make([]string, 0, len(tg.bounds)+1)
				for _, b := range tg.bounds {
					s := promFloat(b)
					if tg.pythonLE && !strings.ContainsAny(s, ".e") {
						s += ".0"
					}
					les = append(les, s)
				}
				les = append(les, "+Inf")
				for i, le := range les {
					// Linear series far from 0, so rate's extrapolation is
					// exact and never clamped at zero.
					start := 1000*float64(ti+1) + tg.inc[i]*100
					series = append(series, fmt.Sprintf("      - series: '%s_bucket{ptd_target=%q,ptd_role=%q,ptd_engine=\"x\",model_name=\"m\",le=%q}'\n        values: '%s+%sx80'",
						tg.series, tg.name, tg.role, le, promFloat(start), promFloat(tg.inc[i])))
				}
			}
			// Expected: internal/slo over the same buckets.
			w := SLORecordNames("1m")
			var exps []string
			joint, rate := 1.0, 0.0
			for _, s := range []struct {
				name   string
				t      float64
				family string
			}{{"ttft", ttft, "time_to_first_token_seconds"}, {"e2e", e2e, "e2e_request_latency_seconds"}} {
				var hs []slo.Hist
				for _, tg := range targets {
					if strings.HasSuffix(tg.series, s.family) {
						hs = append(hs, tg.hist())
					}
				}
				fr, err := slo.FractionOf(hs, s.t)
				if err != nil {
					t.Fatal(err)
				}
				joint *= fr.Fraction
				if s.name == "e2e" {
					rate = fr.Total / 15 // observations per 15 s step
				}
				exps = append(exps, fmt.Sprintf("      - expr: round(%s{slo=%q}, 1e-9)\n        eval_time: 10m\n        exp_samples:\n          - labels: '{role=\"decode\", pool=\"m\", model=\"m\", slo=%q, threshold=%q}'\n            value: %s",
					w.Attainment, s.name, s.name, promFloat(s.t), promFloat(promRound(fr.Fraction, 1e-9))))
				t.Logf("%s ≤ %gs: %.6f (exact %v, at least %v)", s.name, s.t, fr.Fraction, fr.Exact, fr.AtLeast)
				// histogram_quantile at that fraction gives the threshold
				// back when it lies inside a bucket of one instance.
				if !fr.Exact && !fr.AtLeast {
					one, _ := slo.Fraction(hs[0], s.t)
					exps = append(exps, fmt.Sprintf("      - expr: round(histogram_quantile(%s, sum by (le) (rate(vllm:%s_bucket[1m]))), 1e-9)\n        eval_time: 10m\n        exp_samples:\n          - labels: '{}'\n            value: %s",
						promFloat(one.Fraction), s.family, promFloat(promRound(s.t, 1e-9))))
				}
			}
			exps = append(exps, fmt.Sprintf("      - expr: round(%s, 1e-6)\n        eval_time: 10m\n        exp_samples:\n          - labels: '{pool=\"m\", model=\"m\"}'\n            value: %s",
				w.GoodputIndp, promFloat(promRound(rate*joint, 1e-6))))
			test := "rule_files: [slo.yml]\nevaluation_interval: 15s\ntests:\n  - interval: 15s\n    input_series:\n" +
				strings.Join(series, "\n") + "\n    promql_expr_test:\n" + strings.Join(exps, "\n") + "\n"
			p := filepath.Join(dir, "slo_test.yml")
			if err := os.WriteFile(p, []byte(test), 0o644); err != nil {
				t.Fatal(err)
			}
			runPromtool(t, bin, "test", "rules", p)
		})
	}
	f("inside-buckets", 0.3, 3.3)  // interpolated in both engines' buckets
	f("on-bounds", 0.5, 10)        // a bound of every family: exact
	f("below-first", 0.0005, 0.05) // below the first bound: from 0
	f("above-last", 3000, 9000)    // past the last finite bound: at least
	f("mixed", 0.25, 7.25)         // a vLLM bound, inside an SGLang bucket
}

// The rules reject what they cannot compute.
func TestSLORulesErrors(t *testing.T) {
	f := func(in SLOInput, want string) {
		t.Helper()
		_, err := SLORules(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%+v: error %v, want %q", in, err, want)
		}
	}
	f(SLOInput{}, "no threshold")
	f(SLOInput{TTFT: -1}, "finite value > 0")
	f(SLOInput{TTFT: math.Inf(1)}, "finite value > 0")
	f(SLOInput{TTFT: 1, Families: map[string][]SLOFamily{"ttft": {{Series: "x"}}, "e2e": {{"y", []float64{1}}}}}, "bounds must be given")
	f(SLOInput{ITL: 1, Families: map[string][]SLOFamily{"e2e": {{"y", []float64{1}}}}}, "no histogram family")
}
