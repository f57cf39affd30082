package benchresult

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// TestFixtures reads each tool's file (testdata/README.md names their
// sources) and compares what was read, the per-request records included,
// with its golden file.
func TestFixtures(t *testing.T) {
	f := func(file string, format Format, completed int) {
		t.Run(file, func(t *testing.T) {
			r, err := ReadFile(filepath.Join("testdata", file))
			if err != nil {
				t.Fatal(err)
			}
			if r.Format != format || r.Completed == nil || *r.Completed != completed {
				t.Fatalf("read %s with %v completed, want %s with %d", r.Format, r.Completed, format, completed)
			}
			r.File = ""
			got, err := json.MarshalIndent(struct {
				Result
				Requests []Request `json:"requests"`
			}{r, r.Requests}, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", file+".golden")
			if *update {
				if err := os.WriteFile(golden, append(got, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(bytes.TrimSpace(want), got) {
				t.Errorf("%s differs from %s (go test -run TestFixtures -update rewrites it):\n%s", file, golden, got)
			}
		})
	}
	f("vllm_bench_serve.json", VLLM, 3)
	f("sglang_bench_serving.jsonl", SGLang, 238)
	f("aiperf_profile_export_aiperf.json", AIPerfProfile, 98)
	f("aiperf_profile_export.jsonl", AIPerfRecords, 1)
	f("guidellm_benchmarks.json", GuideLLM, 296)
	f("llmd_br_v0_2_1_example.yaml", LLMDBenchmark, 500)
	f("llmd_br_v0_2_example.yaml", LLMDBenchmark, 500)
	f("inference_perf_summary_lifecycle_metrics.json", InferencePerf, 47002)
	f("inference_perf_stage_0_lifecycle_metrics.json", InferencePerf, 60)
}

// TestFixtureFigures pins the figures a reader could get wrong by a unit
// or a key, against the numbers written in the files.
func TestFixtureFigures(t *testing.T) {
	read := func(file string) Result {
		r, err := ReadFile(filepath.Join("testdata", file))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	near := func(what string, got *float64, want float64) {
		t.Helper()
		if got == nil || *got < want*(1-1e-12)-1e-15 || *got > want*(1+1e-12)+1e-15 {
			t.Errorf("%s = %v, want %g", what, got, want)
		}
	}
	v := read("vllm_bench_serve.json")
	near("vLLM TTFT p50 (median_ttft_ms 112)", v.TTFT.P50, 0.112)
	near("vLLM E2E p99 (p99_e2el_ms)", v.E2E.P99, 2.08608)
	if v.Failed == nil || *v.Failed != 1 || v.FailedKind["aiohttp.client_exceptions.ClientConnectorError"] != 1 {
		t.Errorf("vLLM failures %v %v: want 1, a ClientConnectorError", v.Failed, v.FailedKind)
	}
	if v.Goodput != nil || v.Absent["goodput_requests_per_second"] == "" {
		t.Errorf("vLLM goodput %v: want absent with the reason (request_goodput is null)", v.Goodput)
	}
	if v.Clock != clockMonotonic || len(v.Requests) != 4 || v.Requests[0].Start != 81234.51 {
		t.Errorf("vLLM clock %s, %d requests: want monotonic, 4 with their perf_counter starts", v.Clock, len(v.Requests))
	}
	s := read("sglang_bench_serving.jsonl")
	near("SGLang request rate (the last line's)", s.RequestRate, 7.574793125397836)
	near("SGLang ITL p95", s.ITL.P95, 0.0218)
	if s.Failed != nil || s.Absent["failed"] == "" || s.TTFT.P90 != nil {
		t.Errorf("SGLang failed %v, TTFT p90 %v: want both absent (no --output-details, no p90 written)", s.Failed, s.TTFT.P90)
	}
	a := read("aiperf_profile_export.jsonl")
	// The documentation's record repeats time_to_first_token; the last
	// one counts, as Python's json does.
	near("AIPerf record TTFT", a.TTFT.P50, 0.0048984369999999995)
	if a.Requests[0].ID != "7609a2e7-aa53-4ab1-98f4-f35ecafefd25" || a.FailedKind["RequestCancellationError"] != 1 {
		t.Errorf("AIPerf records: id %q, failures %v", a.Requests[0].ID, a.FailedKind)
	}
	if !a.Start.Equal(time.Unix(0, 1759813207532900363)) {
		t.Errorf("AIPerf start %s, want request_start_ns 1759813207532900363", a.Start)
	}
	g := read("guidellm_benchmarks.json")
	near("GuideLLM TTFT p99 (ms → s)", g.TTFT.P99, 0.1604)
	near("GuideLLM E2E p50 (already seconds)", g.E2E.P50, 2.001)
	if g.Failed == nil || *g.Failed != 4 {
		t.Errorf("GuideLLM failed %v, want 3 errored + 1 incomplete", g.Failed)
	}
	ip := read("inference_perf_stage_0_lifecycle_metrics.json")
	near("inference-perf length (60 ÷ requests_per_sec)", ip.Duration, 60/0.996850670841712)
	ips := read("inference_perf_summary_lifecycle_metrics.json")
	near("inference-perf TTFT p50 (median)", ips.TTFT.P50, 2.106196197506506)
	if ips.Failed == nil || *ips.Failed != 0 {
		t.Errorf("inference-perf failed %v, want 0", ips.Failed)
	}
	b := read("llmd_br_v0_2_1_example.yaml")
	near("llm-d TTFT p99", b.TTFT.P99, 0.05029489721637218)
	near("llm-d duration (PT49.97206788184121S)", b.Duration, 49.97206788184121)
	if b.Tool != "inference-perf 0.3.0 (llm-d-benchmark report 0.2.1)" {
		t.Errorf("llm-d tool %q", b.Tool)
	}
}

// TestUnknownFiles: a file no reader knows is one error naming the formats
// that are read, never a partial result.
func TestUnknownFiles(t *testing.T) {
	f := func(name, body string, want error, wantText string) {
		t.Run(name, func(t *testing.T) {
			r, err := Read(name, []byte(body))
			if err == nil {
				t.Fatalf("read %+v, want an error", r)
			}
			if want != nil && !errors.Is(err, want) {
				t.Errorf("error %v, want %v", err, want)
			}
			if !strings.Contains(err.Error(), wantText) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q: want one line containing %q", err, wantText)
			}
		})
	}
	f("empty", "", ErrUnknown, "not a benchmark result")
	f("prometheus", "# TYPE x counter\nx 1\n", ErrUnknown, "not a benchmark result")
	f("other JSON", `{"hello": "world"}`, ErrUnknown, "llm-d-benchmark report v0.2.x")
	f("other JSONL", "{\"a\": 1}\n{\"a\": 2}\n", ErrUnknown, "line 1")
	f("truncated JSON", `{"duration": 3.2, "completed": 3, "failed": 0, "start_times": [1,`, ErrUnknown, "not a benchmark result")
	f("vLLM without completed", `{"duration": 3.2, "failed": 0, "start_times": [], "completed": null}`, nil, "without duration or completed")
	f("llm-d v0.1", "version: '0.1'\nresults: {}\n", ErrUnknown, "not a benchmark result")
	f("llm-d without requests", "version: '0.2.1'\nrun: {uid: x}\nresults: {}\n", nil, "requests.total")
	f("GuideLLM without benchmarks", `{"metadata": {"version": 2}, "benchmarks": []}`, nil, "no benchmark")
	f("AIPerf record without times", `{"metadata": {"x_request_id": "a"}, "metrics": {}, "error": null}`, nil, "request_start_ns")
}

// FuzzRead: no input panics, and a result read has its counts.
func FuzzRead(f *testing.F) {
	for _, name := range []string{"vllm_bench_serve.json", "sglang_bench_serving.jsonl", "aiperf_profile_export_aiperf.json",
		"aiperf_profile_export.jsonl", "guidellm_benchmarks.json", "inference_perf_stage_0_lifecycle_metrics.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("version: '0.2.1'\nrun: {time: {duration: PT1S}}\nresults: {request_performance: {aggregate: {requests: {total: 3}}}}\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := Read("fuzz", b)
		if err == nil && r.Completed == nil {
			t.Fatalf("read %s without completions", r.Format)
		}
	})
}
