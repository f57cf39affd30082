// Package benchresult reads what a load generator measured — vLLM's
// `bench serve --save-result` JSON, SGLang's bench_serving JSONL, AIPerf's
// profile export (JSON and per-record JSONL), GuideLLM's benchmarks JSON and
// llm-d-benchmark's report v0.2.x (which inference-perf writes) — into one
// client view, and places it on the recording's clock (docs/bench.md).
// Each parser follows one upstream version, named in docs/bench.md; a file
// none of them knows is one error, never a partial import.
package benchresult

import (
	"math"
	"slices"
	"strings"
	"time"
)

// Format names a result file's format.
type Format string

// The formats read.
const (
	VLLM           Format = "vllm-bench-serve"
	SGLang         Format = "sglang-bench-serving"
	AIPerfProfile  Format = "aiperf-profile-json"
	AIPerfRecords  Format = "aiperf-records-jsonl"
	GuideLLM       Format = "guidellm-benchmarks"
	LLMDBenchmark  Format = "llmd-benchmark-report"
	InferencePerf  Format = "inference-perf-lifecycle"
	clockWall             = "wall"
	clockMonotonic        = "monotonic"
)

// Dist is a latency's summary in seconds; a nil field is one the tool did
// not report (Result.Absent says why when it matters).
type Dist struct {
	Mean *float64 `json:"mean"`
	P50  *float64 `json:"p50"`
	P90  *float64 `json:"p90"`
	P95  *float64 `json:"p95"`
	P99  *float64 `json:"p99"`
}

// Request is one request as the client saw it. Start is in seconds on the
// tool's clock: Unix seconds for a wall-clock tool, the tool's own
// monotonic seconds otherwise.
type Request struct {
	ID           string  `json:"id,omitempty"`
	Start        float64 `json:"start"`
	TTFT         float64 `json:"ttft_seconds,omitempty"`
	E2E          float64 `json:"e2e_seconds,omitempty"`
	OK           bool    `json:"ok"`
	Error        string  `json:"error,omitempty"`
	OutputTokens int     `json:"output_tokens,omitempty"`
}

// Result is one benchmark's client view, in the tool's own figures: the
// rates and percentiles are those the tool computed, not recomputed here.
type Result struct {
	Format Format `json:"format"`
	Tool   string `json:"tool"`
	File   string `json:"file,omitempty"`
	// Companion is the file read beside File: AIPerf's records placing
	// its summary (Load).
	Companion string `json:"companion_file,omitempty"`
	// Clock is "wall" when the file carries wall-clock times (Start, End
	// set), "monotonic" when only the benchmark's length is known.
	Clock      string         `json:"clock"`
	Start      time.Time      `json:"start,omitzero"`
	End        time.Time      `json:"end,omitzero"`
	Duration   *float64       `json:"duration_seconds"`
	Completed  *int           `json:"completed"`
	Failed     *int           `json:"failed"`
	FailedKind map[string]int `json:"failures_by_kind,omitempty"`
	// RequestRate is completed requests per second; Goodput the requests
	// per second that met the tool's SLO (only when the tool was given one).
	RequestRate *float64 `json:"request_rate"`
	OutputTPS   *float64 `json:"output_tokens_per_second"`
	Goodput     *float64 `json:"goodput_requests_per_second"`
	TTFT        Dist     `json:"ttft_seconds"`
	ITL         Dist     `json:"itl_seconds"`
	E2E         Dist     `json:"e2e_seconds"`
	// Absent says, by JSON key, why a figure is missing.
	Absent   map[string]string `json:"absent,omitempty"`
	Requests []Request         `json:"-"`
}

func (r *Result) absent(key, why string) {
	if r.Absent == nil {
		r.Absent = map[string]string{}
	}
	r.Absent[key] = why
}

// RequestSpan is the first request's start and the last one's end on the
// tool's clock, false without per-request times.
func (r *Result) RequestSpan() (first, last float64, ok bool) {
	for i, q := range r.Requests {
		end := q.Start + q.E2E
		if i == 0 || q.Start < first {
			first = q.Start
		}
		if i == 0 || end > last {
			last = end
		}
	}
	return first, last, len(r.Requests) > 0
}

func ptr[T any](v T) *T { return &v }

// finite is v when it is a finite number, else nil.
func finite(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// scaled is v×k (ms → s), nil stays nil.
func scaled(v *float64, k float64) *float64 {
	if v == nil {
		return nil
	}
	return ptr(*v * k)
}

// kindOf names a failure by its error text: the exception class of a
// Python traceback's last line, or the text's first line, at most 80
// characters.
func kindOf(text string) string {
	var lines []string
	for l := range strings.Lines(text) {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return "unknown"
	}
	s := lines[len(lines)-1]
	if i := strings.IndexByte(s, ':'); i > 0 {
		s = s[:i]
	}
	if len(s) > 80 {
		s = s[:80]
	}
	return s
}

// Quantile is the q-quantile of xs by linear interpolation between order
// statistics (numpy's default, which vLLM's and SGLang's benchmarks use);
// nil for no values.
func Quantile(xs []float64, q float64) *float64 {
	if len(xs) == 0 {
		return nil
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	pos := q * float64(len(s)-1)
	lo := int(math.Floor(pos))
	hi := min(lo+1, len(s)-1)
	return ptr(s[lo] + (s[hi]-s[lo])*(pos-float64(lo)))
}

// Mean is the arithmetic mean of xs, nil for none.
func Mean(xs []float64) *float64 {
	if len(xs) == 0 {
		return nil
	}
	var sum float64
	for _, x := range xs {
		sum += x
	}
	return ptr(sum / float64(len(xs)))
}
