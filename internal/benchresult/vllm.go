package benchresult

import (
	"encoding/json"
	"errors"
	"fmt"
)

// vllmFile is `vllm bench serve --save-result`'s JSON: the result dict of
// vllm/benchmarks/serve.py (docs/bench.md#formats). start_times
// are time.perf_counter() seconds: a monotonic clock with no epoch.
type vllmFile struct {
	Date              string     `json:"date"`
	Backend           string     `json:"backend"`
	ModelID           string     `json:"model_id"`
	Duration          *float64   `json:"duration"`
	Completed         *int       `json:"completed"`
	Failed            *int       `json:"failed"`
	RequestThroughput *float64   `json:"request_throughput"`
	RequestGoodput    *float64   `json:"request_goodput"`
	OutputThroughput  *float64   `json:"output_throughput"`
	StartTimes        []float64  `json:"start_times"`
	TTFTs             []*float64 `json:"ttfts"`
	Latencies         []*float64 `json:"latencies"`
	Errors            []*string  `json:"errors"`
	OutputLens        []*int     `json:"output_lens"`
}

func readVLLM(b []byte) (Result, error) {
	var f vllmFile
	if err := json.Unmarshal(b, &f); err != nil {
		return Result{}, fmt.Errorf("vLLM bench serve result: %w", err)
	}
	var keys map[string]json.RawMessage
	_ = json.Unmarshal(b, &keys) // it decoded above
	if f.Duration == nil || f.Completed == nil {
		return Result{}, errors.New("vLLM bench serve result without duration or completed")
	}
	r := Result{Format: VLLM, Tool: "vllm bench serve", Clock: clockMonotonic,
		Duration: f.Duration, Completed: f.Completed, Failed: f.Failed,
		RequestRate: f.RequestThroughput, OutputTPS: f.OutputThroughput, Goodput: f.RequestGoodput,
		TTFT: msDist(keys, "ttft", "mean_%s_ms", "median_%s_ms"),
		ITL:  msDist(keys, "itl", "mean_%s_ms", "median_%s_ms"),
		E2E:  msDist(keys, "e2el", "mean_%s_ms", "median_%s_ms")}
	if r.Failed == nil {
		r.absent("failed", "the result has no failed count")
	}
	if r.Goodput == nil {
		r.absent("goodput_requests_per_second", "vllm bench serve was run without --goodput")
	}
	n := len(f.StartTimes)
	if n > 0 && len(f.TTFTs) == n && len(f.Latencies) == n && len(f.Errors) == n {
		for i := range n {
			q := Request{Start: f.StartTimes[i], OK: f.Errors[i] == nil || *f.Errors[i] == ""}
			if f.TTFTs[i] != nil {
				q.TTFT = *f.TTFTs[i]
			}
			if f.Latencies[i] != nil {
				q.E2E = *f.Latencies[i]
			}
			if !q.OK {
				q.Error = *f.Errors[i]
				if r.FailedKind == nil {
					r.FailedKind = map[string]int{}
				}
				r.FailedKind[kindOf(q.Error)]++
			}
			if i < len(f.OutputLens) && f.OutputLens[i] != nil {
				q.OutputTokens = *f.OutputLens[i]
			}
			r.Requests = append(r.Requests, q)
		}
	}
	return r, nil
}

// msDist reads a latency's summary from keys such as mean_ttft_ms,
// median_ttft_ms, p90_ttft_ms and p99_ttft_ms, in seconds.
func msDist(keys map[string]json.RawMessage, name, meanKey, medianKey string) Dist {
	get := func(key string) *float64 {
		var v *float64
		if raw, ok := keys[key]; ok && json.Unmarshal(raw, &v) == nil && v != nil {
			return scaled(finite(*v), 1e-3)
		}
		return nil
	}
	return Dist{
		Mean: get(fmt.Sprintf(meanKey, name)),
		P50:  get(fmt.Sprintf(medianKey, name)),
		P90:  get("p90_" + name + "_ms"),
		P95:  get("p95_" + name + "_ms"),
		P99:  get("p99_" + name + "_ms"),
	}
}
