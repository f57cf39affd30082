package report

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/ptdmon/ptdmon/internal/benchresult"
)

// LLMDBenchmarkVersion is the llm-d-benchmark report format the export
// writes (br_v0_2_1_json_schema.json of llm-d/llm-d-benchmark@8bc9f1dd,
// docs/bench.md#exporting).
const LLMDBenchmarkVersion = "0.2.1"

// brStats is the report format's Statistics: units and mean required.
type brStats struct {
	Units string   `json:"units"`
	Mean  float64  `json:"mean"`
	P50   *float64 `json:"p50,omitempty"`
	P90   *float64 `json:"p90,omitempty"`
	P95   *float64 `json:"p95,omitempty"`
	P99   *float64 `json:"p99,omitempty"`
}

func brDist(d benchresult.Dist, units string) *brStats {
	if d.Mean == nil {
		return nil
	}
	return &brStats{Units: units, Mean: *d.Mean, P50: d.P50, P90: d.P90, P95: d.P95, P99: d.P99}
}

func brMean(v *float64, units string) *brStats {
	if v == nil {
		return nil
	}
	return &brStats{Units: units, Mean: *v}
}

// ptdmonObservability is ptdmon's part of the report's observability
// section, which the format leaves open: the stages' rates over the steady
// span, the verdict, capacities and advice, and the client-against-server
// checks.
type ptdmonObservability struct {
	Version    string  `json:"version,omitempty"`
	Steady     Steady  `json:"steady"`
	Stages     Stages  `json:"stages"`
	Verdict    Modal   `json:"verdict"`
	Capacities any     `json:"capacities"`
	Advice     any     `json:"advice,omitempty"`
	KV         KV      `json:"kv"`
	Checks     []Check `json:"client_checks,omitempty"`
	Placement  any     `json:"client_placement,omitempty"`
}

// LLMDBenchmark writes the report as an llm-d-benchmark report v0.2.1
// (JSON, which its YAML readers read too): the run's times, the client's
// request performance when a benchmark result was given, and ptdmon's
// stages, verdict and capacities under results.observability.ptdmon.
func (r *Report) LLMDBenchmark() ([]byte, error) {
	h := sha256.Sum256([]byte(r.Run.ConfigHash + r.Run.From.String() + r.Run.To.String()))
	dur := r.Run.To.Sub(r.Run.From).Seconds()
	obs := ptdmonObservability{Version: r.Run.Version, Steady: r.Steady, Stages: r.Stages, Verdict: r.Verdict,
		Capacities: r.Capacities, KV: r.KV}
	if r.Advice != nil {
		obs.Advice = r.Advice
	}
	results := map[string]any{"observability": map[string]any{"ptdmon": obs}}
	if c := r.Client; c != nil {
		obs.Checks, obs.Placement = c.Checks, c.Placement
		results["observability"] = map[string]any{"ptdmon": obs}
		if agg := clientAggregate(c); agg != nil {
			results["request_performance"] = map[string]any{"aggregate": agg}
		}
	}
	doc := map[string]any{
		"version": LLMDBenchmarkVersion,
		"run": map[string]any{
			"uid":         hex.EncodeToString(h[:16]),
			"description": "ptdmon report",
			"keywords":    []string{"ptdmon"},
			"time": map[string]any{"start": r.Run.From, "end": r.Run.To,
				"duration": "PT" + strconv.FormatFloat(ms(dur), 'f', -1, 64) + "S"},
		},
		"results": results,
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("llm-d-benchmark report: %w", err)
	}
	return append(b, '\n'), nil
}

// clientAggregate is the client's figures as the format's aggregate
// request performance; nil without a completion count.
func clientAggregate(c *Client) map[string]any {
	if c.Completed == nil {
		return nil
	}
	req := map[string]any{"total": *c.Completed}
	if c.Failed != nil {
		req["total"], req["failures"] = *c.Completed+*c.Failed, *c.Failed
	}
	agg := map[string]any{"requests": req}
	lat := map[string]any{}
	for key, s := range map[string]*brStats{"time_to_first_token": brDist(c.TTFT, "s"),
		"inter_token_latency": brDist(c.ITL, "s/token"), "request_latency": brDist(c.E2E, "s")} {
		if s != nil {
			lat[key] = s
		}
	}
	if len(lat) > 0 {
		agg["latency"] = lat
	}
	thr := map[string]any{}
	if s := brMean(c.RequestRate, "queries/s"); s != nil {
		thr["request_rate"] = s
	}
	if s := brMean(c.OutputTPS, "tokens/s"); s != nil {
		thr["output_token_rate"] = s
	}
	if len(thr) > 0 {
		agg["throughput"] = thr
	}
	return agg
}
