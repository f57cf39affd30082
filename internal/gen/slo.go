package gen

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// SLOFamily is one engine latency histogram and its bucket bounds. The
// bounds must be the engine's: PromQL cannot read a number out of the le
// label, so the rule picks the buckets around the threshold by name.
type SLOFamily struct {
	Series string    // histogram family, without _bucket
	Bounds []float64 // finite upper bounds, increasing
}

// SLOInput configures the SLO attainment rules.
type SLOInput struct {
	// Thresholds in seconds; 0 leaves an SLO out.
	TTFT, ITL, E2E float64
	// Window is the range the fractions are taken over (default 1m: a
	// fraction needs many requests).
	Window time.Duration
	// Families by SLO ("ttft", "itl", "e2e"); nil: DefaultSLOFamilies.
	Families map[string][]SLOFamily
}

// The engines' default bucket bounds: vLLM's v1/metrics/loggers.py and
// SGLang's observability/metrics_collector.py (docs/engines.md).
var (
	vllmTTFTBounds = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5,
		0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80, 160, 640, 2560}
	vllmITLBounds = []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75,
		1, 2.5, 5, 7.5, 10, 20, 40, 80}
	vllmE2EBounds = []float64{0.3, 0.5, 0.8, 1, 1.5, 2, 2.5, 5, 10, 15,
		20, 30, 40, 50, 60, 120, 240, 480, 960, 1920, 7680}
	sglangTTFTBounds = []float64{0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400}
	sglangE2EBounds  = []float64{0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400, 800}
	sglangITLBounds  = []float64{0.002, 0.004, 0.006, 0.008, 0.010, 0.015, 0.020, 0.025, 0.030, 0.035,
		0.040, 0.060, 0.080, 0.100, 0.200, 0.400, 0.600, 0.800, 1, 2, 4, 6, 8}
)

// DefaultSLOFamilies are vLLM's and SGLang's TTFT, ITL and E2E histograms
// with their default buckets. Each engine's older ITL name is a fallback,
// read only for targets without the current one.
func DefaultSLOFamilies() map[string][]SLOFamily {
	return map[string][]SLOFamily{
		"ttft": {
			{"vllm:time_to_first_token_seconds", vllmTTFTBounds},
			{"sglang:time_to_first_token_seconds", sglangTTFTBounds},
		},
		"itl": {
			{"vllm:inter_token_latency_seconds", vllmITLBounds},
			{"vllm:time_per_output_token_seconds", vllmITLBounds},
			{"sglang:inter_token_latency_seconds", sglangITLBounds},
			{"sglang:time_per_output_token_seconds", sglangITLBounds},
		},
		"e2e": {
			{"vllm:e2e_request_latency_seconds", vllmE2EBounds},
			{"sglang:e2e_request_latency_seconds", sglangE2EBounds},
		},
	}
}

// SLONames are the recorded series, labelled {role, pool, model, slo,
// threshold}.
type SLONames struct {
	Within      string // observations/s within the threshold
	Total       string // observations/s
	Attainment  string // Within ÷ Total
	Requests    string // finished requests/s (E2E observations), by role and model
	GoodputIndp string // decode requests/s × Π attainment (independence), by pool and model
}

// SLORecordNames returns the names for window w.
func SLORecordNames(w string) SLONames {
	return SLONames{
		Within:      "role:ptd_slo_within:rate" + w,
		Total:       "role:ptd_slo_observations:rate" + w,
		Attainment:  "role:ptd_slo_attainment:ratio_rate" + w,
		Requests:    "role:ptd_slo_requests:rate" + w,
		GoodputIndp: "model:ptd_slo_goodput_independent:rate" + w,
	}
}

// SLORules returns the recording rules of SLO attainment on the engines'
// path: for each SLO, the rate of observations within the threshold (a
// bucket read exactly, or interpolated linearly between the two buckets
// around it, the first bucket's lower bound being 0), over the rate of all
// observations, by role and model. Goodput multiplies the decode role's
// fractions, assuming independence, as internal/slo does.
func SLORules(in SLOInput) (RuleFile, error) {
	if in.Window <= 0 {
		in.Window = time.Minute
	}
	if in.Families == nil {
		in.Families = DefaultSLOFamilies()
	}
	w := promDuration(in.Window)
	n := SLORecordNames(w)
	var rules []Rule
	var slos []string
	for _, s := range []struct {
		name string
		t    float64
	}{{"ttft", in.TTFT}, {"itl", in.ITL}, {"e2e", in.E2E}} {
		if s.t == 0 {
			continue
		}
		if s.t < 0 || math.IsNaN(s.t) || math.IsInf(s.t, 0) {
			return RuleFile{}, fmt.Errorf("slo %s threshold %g: want a finite value > 0", s.name, s.t)
		}
		fams := in.Families[s.name]
		if len(fams) == 0 {
			return RuleFile{}, fmt.Errorf("slo %s: no histogram family", s.name)
		}
		var within, total []string
		for _, f := range fams {
			e, err := withinExpr(f, s.t, w)
			if err != nil {
				return RuleFile{}, fmt.Errorf("slo %s: %w", s.name, err)
			}
			within = append(within, e)
			total = append(total, bucketRate(f.Series, "+Inf", w))
		}
		lbl := []string{"slo", s.name, "threshold", formatBound(s.t)}
		rules = append(rules,
			record(n.Within, toRoleLabels(fallback(within...)), lbl...),
			record(n.Total, toRoleLabels(fallback(total...)), lbl...),
			record(n.Attainment, fmt.Sprintf(`%s{slo=%q} / %s{slo=%q}`, n.Within, s.name, n.Total, s.name), lbl...))
		slos = append(slos, s.name)
	}
	if len(slos) == 0 {
		return RuleFile{}, fmt.Errorf("slo: no threshold set (ttft, itl, e2e)")
	}
	// Requests/s: one E2E observation per finished request.
	var reqs []string
	for _, f := range in.Families["e2e"] {
		reqs = append(reqs, bucketRate(f.Series, "+Inf", w))
	}
	if len(reqs) == 0 {
		return RuleFile{}, fmt.Errorf("slo: no e2e histogram family to count requests")
	}
	rules = append(rules, record(n.Requests, toRoleLabels(fallback(reqs...))))
	// Goodput: decode requests/s × the product of the decode role's
	// fractions; each factor drops slo and threshold so the product matches.
	factors := []string{fmt.Sprintf(`sum by (pool, model) (%s{role="decode"})`, n.Requests)}
	for _, s := range slos {
		factors = append(factors, fmt.Sprintf(`sum by (pool, model) (%s{role="decode", slo=%q})`, n.Attainment, s))
	}
	rules = append(rules, record(n.GoodputIndp, strings.Join(factors, " * ")))
	return RuleFile{Groups: []RuleGroup{{Name: "ptdmon-slo", Interval: "15s", Rules: rules}}}, nil
}

// toRoleLabels sums a per-engine expression by role, pool and model, named
// as ptdmon names them: each pool's attainment is its own (docs/pools.md).
func toRoleLabels(expr string) string {
	e := fmt.Sprintf(`label_replace(%s, "role", "$1", "ptd_role", "(.*)")`, "("+expr+")")
	e = fmt.Sprintf(`label_replace(%s, "model", "$1", "model_name", "(.*)")`, e)
	e = poolLabel(e, labelEngine, "model", labelPool)
	return sumBy("sum", "role, pool, model", e)
}

// bucketRate is the per-engine rate of one bucket, le dropped.
func bucketRate(series, le, w string) string {
	return sumBy("sum", engineBy, rangeFn("rate", sel(series+"_bucket", onlyPtd, leMatcher(le)), w))
}

// withinExpr is the rate of observations ≤ t in family f.
func withinExpr(f SLOFamily, t float64, w string) (string, error) {
	b := f.Bounds
	if len(b) == 0 || !sort.Float64sAreSorted(b) {
		return "", fmt.Errorf("%s: bounds must be given, increasing", f.Series)
	}
	i := sort.SearchFloat64s(b, t)
	switch {
	case i < len(b) && b[i] == t:
		return bucketRate(f.Series, formatBound(t), w), nil
	case i == len(b):
		// Above the last finite bound: the +Inf bucket cannot be split.
		return bucketRate(f.Series, formatBound(b[len(b)-1]), w), nil
	case i == 0 && b[0] <= 0:
		return "0 * " + bucketRate(f.Series, formatBound(b[0]), w), nil
	}
	lo := 0.0
	if i > 0 {
		lo = b[i-1]
	}
	hi := bucketRate(f.Series, formatBound(b[i]), w)
	frac := strconv.FormatFloat((t-lo)/(b[i]-lo), 'g', -1, 64)
	if i == 0 {
		return fmt.Sprintf("%s * %s", frac, hi), nil
	}
	below := bucketRate(f.Series, formatBound(lo), w)
	return fmt.Sprintf("(%s + %s * (%s - %s))", below, frac, hi, below), nil
}

// formatBound writes a bound as Go does (1, 0.5, 2560).
func formatBound(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// leMatcher matches a bound however the engine printed it: Python's
// prometheus_client writes 1.0 where Go writes 1.
func leMatcher(le string) string {
	if le == "+Inf" {
		return `le="+Inf"`
	}
	alts := []string{regexpQuote(le)}
	if !strings.ContainsAny(le, ".eE") {
		alts = append(alts, regexpQuote(le+".0"))
	}
	return fmt.Sprintf(`le=~"%s"`, strings.Join(alts, "|"))
}

func regexpQuote(s string) string {
	r := strings.NewReplacer(".", `\\.`, "+", `\\+`)
	return r.Replace(s)
}

// SLORulesYAML is SLORules as a rule file.
func SLORulesYAML(in SLOInput) ([]byte, error) {
	rf, err := SLORules(in)
	if err != nil {
		return nil, err
	}
	return encodeDocs("# Generated by `ptdmon gen slo`; do not edit.\n", rf)
}
