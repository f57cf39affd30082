package benchresult

import (
	"encoding/json"
	"errors"
	"fmt"
)

// sglangLine is one line of SGLang's bench_serving JSONL: the result dict
// of python/sglang/bench_serving.py, with the per-request arrays only under
// --output-details (docs/bench.md#formats). It appends one
// line per run to the file.
type sglangLine struct {
	Backend           string     `json:"backend"`
	Duration          *float64   `json:"duration"`
	Completed         *int       `json:"completed"`
	RequestThroughput *float64   `json:"request_throughput"`
	OutputThroughput  *float64   `json:"output_throughput"`
	TTFTs             []*float64 `json:"ttfts"`
	Errors            []*string  `json:"errors"`
}

func readSGLang(lines [][]byte) (Result, error) {
	// The file grows by one line per run: the newest run is the last.
	b := lines[len(lines)-1]
	var f sglangLine
	if err := json.Unmarshal(b, &f); err != nil {
		return Result{}, fmt.Errorf("SGLang bench_serving line %d: %w", len(lines), err)
	}
	var keys map[string]json.RawMessage
	_ = json.Unmarshal(b, &keys)
	if f.Duration == nil || f.Completed == nil {
		return Result{}, fmt.Errorf("SGLang bench_serving line %d: %w", len(lines), errors.New("no duration or completed"))
	}
	r := Result{Format: SGLang, Tool: "sglang bench_serving", Clock: clockMonotonic,
		Duration: f.Duration, Completed: f.Completed,
		RequestRate: f.RequestThroughput, OutputTPS: f.OutputThroughput,
		TTFT: msDist(keys, "ttft", "mean_%s_ms", "median_%s_ms"),
		ITL:  msDist(keys, "itl", "mean_%s_ms", "median_%s_ms"),
		E2E:  msDist(keys, "e2e_latency", "mean_%s_ms", "median_%s_ms")}
	r.absent("goodput_requests_per_second", "bench_serving's result has no goodput")
	if len(lines) > 1 {
		r.absent("earlier_runs", fmt.Sprintf("the file holds %d runs; this is the last", len(lines)))
	}
	if f.Errors != nil {
		failed := 0
		for _, e := range f.Errors {
			if e != nil && *e != "" {
				failed++
				if r.FailedKind == nil {
					r.FailedKind = map[string]int{}
				}
				r.FailedKind[kindOf(*e)]++
			}
		}
		r.Failed = &failed
	} else {
		r.absent("failed", "bench_serving counts no failures without --output-details")
	}
	return r, nil
}
