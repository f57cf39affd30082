// Package benchgen is a small load generator's bookkeeping for tests: given
// the requests it sent and what it saw of each, it computes its figures as
// the benchmark tools do and writes them in each tool's result format, so a
// test can check that ptdmon reads back exactly what the tool computed.
// Its percentiles are its own (numpy's linear interpolation), independent
// of the reader's.
package benchgen

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"time"
)

// Request is one request the generator sent.
type Request struct {
	ID           string
	Start        time.Time
	TTFT, E2E    float64 // seconds from Start to the first and the last token
	OutputTokens int
	InputTokens  int
	Err          string // empty: it succeeded
}

// ITL is the request's mean gap between tokens after the first.
func (q Request) ITL() (float64, bool) {
	if q.OutputTokens < 2 {
		return 0, false
	}
	return (q.E2E - q.TTFT) / float64(q.OutputTokens-1), true
}

// Run is one benchmark: its requests, the SLO goodput is judged by, and
// the generator's monotonic clock at the first request (a perf_counter).
type Run struct {
	Requests []Request
	SLOTTFT  float64 // goodput counts completions with TTFT ≤ SLOTTFT; 0: no goodput
	Mono     float64
}

// Stat is a latency's mean and percentiles in seconds.
type Stat struct{ Mean, P50, P90, P95, P99 float64 }

// Figures are what the generator computed of its run.
type Figures struct {
	Start, End                time.Time
	Duration                  float64
	Completed, Failed         int
	FailedKind                map[string]int
	RequestRate, OutputTPS    float64
	Goodput                   float64
	TTFT, ITL, E2E            Stat
	OutputTokens, InputTokens int
}

func pct(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	pos := p / 100 * float64(len(sorted)-1)
	i := int(pos)
	if i+1 >= len(sorted) {
		return sorted[len(sorted)-1]
	}
	return sorted[i] + (sorted[i+1]-sorted[i])*(pos-float64(i))
}

func stat(xs []float64) Stat {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	var sum float64
	for _, x := range s {
		sum += x
	}
	return Stat{Mean: sum / float64(len(s)), P50: pct(s, 50), P90: pct(s, 90), P95: pct(s, 95), P99: pct(s, 99)}
}

// Figures computes the run's figures: the span from the first request's
// start to the last one's end, completions over it, the latencies of the
// completed requests.
func (r Run) Figures() Figures {
	var f Figures
	var ttft, itl, e2e []float64
	good := 0
	for i, q := range r.Requests {
		end := q.Start.Add(time.Duration(q.E2E * float64(time.Second)))
		if i == 0 || q.Start.Before(f.Start) {
			f.Start = q.Start
		}
		if end.After(f.End) {
			f.End = end
		}
		f.InputTokens += q.InputTokens
		if q.Err != "" {
			f.Failed++
			if f.FailedKind == nil {
				f.FailedKind = map[string]int{}
			}
			f.FailedKind[q.Err]++
			continue
		}
		f.Completed++
		f.OutputTokens += q.OutputTokens
		ttft, e2e = append(ttft, q.TTFT), append(e2e, q.E2E)
		if v, ok := q.ITL(); ok {
			itl = append(itl, v)
		}
		if r.SLOTTFT > 0 && q.TTFT <= r.SLOTTFT {
			good++
		}
	}
	f.Duration = f.End.Sub(f.Start).Seconds()
	f.RequestRate = float64(f.Completed) / f.Duration
	f.OutputTPS = float64(f.OutputTokens) / f.Duration
	f.Goodput = float64(good) / f.Duration
	f.TTFT, f.ITL, f.E2E = stat(ttft), stat(itl), stat(e2e)
	return f
}

func (r Run) mono(t time.Time, f Figures) float64 { return r.Mono + t.Sub(f.Start).Seconds() }

func marshal(v any) []byte {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		panic(err) // maps of numbers and strings always encode
	}
	return b
}

// msKeys adds mean_<name>_ms, median_, std_ and pNN_ as vLLM and SGLang
// name them; only the percentiles in ps.
func msKeys(m map[string]any, name string, s Stat, ps ...int) {
	m["mean_"+name+"_ms"] = s.Mean * 1e3
	m["median_"+name+"_ms"] = s.P50 * 1e3
	m["std_"+name+"_ms"] = 0.0
	for _, p := range ps {
		v := map[int]float64{90: s.P90, 95: s.P95, 99: s.P99}[p]
		m[fmt.Sprintf("p%d_%s_ms", p, name)] = v * 1e3
	}
}

// VLLM is `vllm bench serve --save-result --metric-percentiles 90,95,99`'s
// JSON.
func (r Run) VLLM() []byte {
	f := r.Figures()
	m := map[string]any{"date": f.End.Format("20060102-150405"), "backend": "vllm", "model_id": "sim",
		"duration": f.Duration, "completed": f.Completed, "failed": f.Failed,
		"total_input_tokens": f.InputTokens, "total_output_tokens": f.OutputTokens,
		"request_throughput": f.RequestRate, "output_throughput": f.OutputTPS, "request_goodput": nil}
	if r.SLOTTFT > 0 {
		m["request_goodput"] = f.Goodput
	}
	var starts, ttfts, lats []float64
	var errs []string
	var outs []int
	var itls [][]float64
	for _, q := range r.Requests {
		starts, ttfts, lats = append(starts, r.mono(q.Start, f)), append(ttfts, q.TTFT), append(lats, q.E2E)
		errs, outs = append(errs, q.Err), append(outs, q.OutputTokens)
		var gaps []float64
		if v, ok := q.ITL(); ok {
			for range q.OutputTokens - 1 {
				gaps = append(gaps, v)
			}
		}
		itls = append(itls, gaps)
	}
	m["start_times"], m["ttfts"], m["latencies"], m["errors"], m["output_lens"], m["itls"] = starts, ttfts, lats, errs, outs, itls
	msKeys(m, "ttft", f.TTFT, 90, 95, 99)
	msKeys(m, "itl", f.ITL, 90, 95, 99)
	msKeys(m, "e2el", f.E2E, 90, 95, 99)
	return marshal(m)
}

// SGLang is one line of bench_serving's JSONL, with --output-details.
func (r Run) SGLang() []byte {
	f := r.Figures()
	m := map[string]any{"backend": "sglang", "dataset_name": "random", "request_rate": nil,
		"duration": f.Duration, "completed": f.Completed, "total_input_tokens": f.InputTokens,
		"total_output_tokens": f.OutputTokens, "total_output_tokens_retokenized": f.OutputTokens,
		"request_throughput": f.RequestRate, "output_throughput": f.OutputTPS}
	msKeys(m, "ttft", f.TTFT, 99)
	msKeys(m, "itl", f.ITL, 95, 99)
	msKeys(m, "e2e_latency", f.E2E, 99)
	var errs []string
	for _, q := range r.Requests {
		errs = append(errs, q.Err)
	}
	m["errors"] = errs
	b, _ := json.Marshal(m)
	return append(b, '\n')
}

func aiperfMetric(unit string, s Stat, k float64) map[string]any {
	return map[string]any{"unit": unit, "avg": s.Mean * k, "p50": s.P50 * k, "p90": s.P90 * k, "p95": s.P95 * k, "p99": s.P99 * k}
}

// AIPerfProfile is AIPerf's profile_export_aiperf.json.
func (r Run) AIPerfProfile() []byte {
	f := r.Figures()
	m := map[string]any{
		"request_throughput":      map[string]any{"unit": "requests/sec", "avg": f.RequestRate},
		"request_count":           map[string]any{"unit": "requests", "avg": float64(f.Completed)},
		"output_token_throughput": map[string]any{"unit": "tokens/sec", "avg": f.OutputTPS},
		"benchmark_duration":      map[string]any{"unit": "sec", "avg": f.Duration},
		"time_to_first_token":     aiperfMetric("ms", f.TTFT, 1e3),
		"inter_token_latency":     aiperfMetric("ms", f.ITL, 1e3),
		"request_latency":         aiperfMetric("ms", f.E2E, 1e3),
		"start_time":              f.Start.Local().Format("2006-01-02T15:04:05.999999"),
		"end_time":                f.End.Local().Format("2006-01-02T15:04:05.999999"),
		"was_cancelled":           false,
	}
	var summary []any
	for kind, n := range f.FailedKind {
		summary = append(summary, map[string]any{"error_details": map[string]any{"code": 500, "type": kind, "message": kind}, "count": n})
	}
	m["error_summary"] = summary
	if f.Failed > 0 {
		m["error_request_count"] = map[string]any{"unit": "requests", "avg": float64(f.Failed)}
	}
	if r.SLOTTFT > 0 {
		m["goodput"] = map[string]any{"unit": "requests/sec", "avg": f.Goodput}
	}
	return marshal(m)
}

// AIPerfRecords is AIPerf's profile_export.jsonl.
func (r Run) AIPerfRecords() []byte {
	var out []byte
	for i, q := range r.Requests {
		end := q.Start.Add(time.Duration(q.E2E * float64(time.Second)))
		md := map[string]any{"session_num": i, "x_request_id": q.ID, "turn_index": 0,
			"request_start_ns": q.Start.UnixNano(), "request_end_ns": end.UnixNano(),
			"benchmark_phase": "profiling", "was_cancelled": false, "cancellation_time_ns": nil}
		rec := map[string]any{"metadata": md, "error": nil}
		if q.Err != "" {
			rec["metrics"] = map[string]any{"error_isl": map[string]any{"value": q.InputTokens, "unit": "tokens"}}
			rec["error"] = map[string]any{"code": 500, "type": q.Err, "message": q.Err}
		} else {
			ms := map[string]any{
				"input_sequence_length":  map[string]any{"value": q.InputTokens, "unit": "tokens"},
				"time_to_first_token":    map[string]any{"value": q.TTFT * 1e3, "unit": "ms"},
				"request_latency":        map[string]any{"value": q.E2E * 1e3, "unit": "ms"},
				"output_sequence_length": map[string]any{"value": q.OutputTokens, "unit": "tokens"},
			}
			if v, ok := q.ITL(); ok {
				ms["inter_token_latency"] = map[string]any{"value": v * 1e3, "unit": "ms"}
			}
			rec["metrics"] = ms
		}
		b, _ := json.Marshal(rec)
		out = append(append(out, b...), '\n')
	}
	return out
}

func guideDist(s Stat, k float64) map[string]any {
	return map[string]any{"successful": map[string]any{"mean": s.Mean * k, "median": s.P50 * k,
		"percentiles": map[string]any{"p50": s.P50 * k, "p90": s.P90 * k, "p95": s.P95 * k, "p99": s.P99 * k}}}
}

// GuideLLM is GuideLLM's benchmarks.json with one benchmark.
func (r Run) GuideLLM() []byte {
	f := r.Figures()
	unix := func(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }
	bm := map[string]any{"type_": "generative_benchmark",
		"scheduler_metrics": map[string]any{"start_time": unix(f.Start), "end_time": unix(f.End),
			"request_start_time": unix(f.Start), "request_end_time": unix(f.End)},
		"metrics": map[string]any{
			"request_totals":           map[string]any{"successful": f.Completed, "errored": f.Failed, "incomplete": 0, "total": f.Completed + f.Failed},
			"requests_per_second":      map[string]any{"successful": map[string]any{"mean": f.RequestRate}},
			"output_tokens_per_second": map[string]any{"successful": map[string]any{"mean": f.OutputTPS}},
			"time_to_first_token_ms":   guideDist(f.TTFT, 1e3),
			"inter_token_latency_ms":   guideDist(f.ITL, 1e3),
			"request_latency":          guideDist(f.E2E, 1),
		}}
	return marshal(map[string]any{"metadata": map[string]any{"version": 2, "guidellm_version": "0.4.0"},
		"benchmarks": []any{bm}})
}

func brStats(units string, s Stat) map[string]any {
	return map[string]any{"units": units, "mean": s.Mean, "p50": s.P50, "p90": s.P90, "p95": s.P95, "p99": s.P99}
}

// LLMD is an llm-d-benchmark report v0.2.1, as inference-perf writes it.
func (r Run) LLMD() []byte {
	f := r.Figures()
	return marshal(map[string]any{"version": "0.2.1",
		"run": map[string]any{"uid": "benchgen", "time": map[string]any{
			"start": f.Start.Format(time.RFC3339Nano), "end": f.End.Format(time.RFC3339Nano),
			"duration": "PT" + strconv.FormatFloat(f.Duration, 'f', -1, 64) + "S"}},
		"results": map[string]any{"request_performance": map[string]any{"aggregate": map[string]any{
			"requests": map[string]any{"total": f.Completed + f.Failed, "failures": f.Failed},
			"latency": map[string]any{"time_to_first_token": brStats("s", f.TTFT),
				"inter_token_latency": brStats("s/token", f.ITL), "request_latency": brStats("s", f.E2E)},
			"throughput": map[string]any{"request_rate": map[string]any{"units": "queries/s", "mean": f.RequestRate},
				"output_token_rate": map[string]any{"units": "tokens/s", "mean": f.OutputTPS}},
		}}}})
}

func ipStats(s Stat) map[string]any {
	return map[string]any{"mean": s.Mean, "median": s.P50, "p90": s.P90, "p95": s.P95, "p99": s.P99}
}

// InferencePerf is inference-perf's summary_lifecycle_metrics.json.
func (r Run) InferencePerf() []byte {
	f := r.Figures()
	return marshal(map[string]any{
		"load_summary": map[string]any{"count": f.Completed + f.Failed},
		"successes": map[string]any{"count": f.Completed,
			"latency": map[string]any{"request_latency": ipStats(f.E2E), "time_to_first_token": ipStats(f.TTFT),
				"inter_token_latency": ipStats(f.ITL)},
			"throughput": map[string]any{"requests_per_sec": f.RequestRate, "output_tokens_per_sec": f.OutputTPS}},
		"failures": map[string]any{"count": f.Failed, "request_latency": nil, "prompt_len": nil},
	})
}
