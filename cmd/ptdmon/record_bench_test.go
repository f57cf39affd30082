package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/benchresult"
	"github.com/ptdmon/ptdmon/internal/benchresult/benchgen"
	"github.com/ptdmon/ptdmon/internal/report"
	"github.com/ptdmon/ptdmon/internal/sim"
	"github.com/ptdmon/ptdmon/internal/sim/simtest"
)

// TestRecordKeepsTheBenchmarkResult: record wraps a load generator that
// writes a vLLM bench serve result where its --result-dir flag says;
// record finds and keeps it, and the report of the recording shows the
// client view anchored to the command's end, and exports it for
// llm-d-benchmark's tooling.
func TestRecordKeepsTheBenchmarkResult(t *testing.T) {
	t.Parallel() // its own simulator and directory; reads loadRecording, which only serial tests replace
	cfg := recordingSimConfig(t, "balanced")
	tmp := t.TempDir()
	dir, outDir := filepath.Join(tmp, "round1"), filepath.Join(tmp, "results")
	t0 := time.Now()
	run := benchgen.Run{Mono: 1000}
	for i := range 5 {
		run.Requests = append(run.Requests, benchgen.Request{ID: "r", Start: t0.Add(time.Duration(i) * 200 * time.Millisecond),
			TTFT: 0.1, E2E: 0.3, OutputTokens: 16, InputTokens: 64})
	}
	src := filepath.Join(tmp, "src.json")
	if err := os.WriteFile(src, run.VLLM(), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr strings.Builder
	code := dispatch([]string{"record", "-config", cfg, "-o", dir, "-settle", "500ms", "--",
		"sh", "-c", `sleep 1.5; mkdir -p "$1" && cp "$2" "$1/openai-2qps-sim.json"`, "sh", outDir, src, "--save-result", "--result-dir", outDir}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "kept vllm bench serve's result") {
		t.Fatalf("record does not say it kept the result:\n%s", stderr.String())
	}
	if benchresult.Kept(dir) == "" {
		t.Fatal("the recording keeps no result")
	}
	var o, e strings.Builder
	if code := dispatch([]string{"report", dir, "-format", "json"}, &o, &e); code != 0 {
		t.Fatalf("report exited %d: %s", code, e.String())
	}
	var rep struct {
		Client struct {
			Completed *int `json:"completed"`
			Placement struct {
				Method   string   `json:"method"`
				Residual *float64 `json:"residual_seconds"`
			} `json:"placement"`
		} `json:"client"`
	}
	if err := json.Unmarshal([]byte(o.String()), &rep); err != nil {
		t.Fatal(err)
	}
	c := rep.Client
	if c.Completed == nil || *c.Completed != 5 || c.Placement.Method != benchresult.PlacedCommandEnd ||
		c.Placement.Residual == nil || *c.Placement.Residual < 0.39 || *c.Placement.Residual > 60 {
		t.Errorf("client view: %v completions, %s, residual %v: want 5 anchored to the command's end, residual at least 0.4 s (the 1.5 s sleep − the 1.1 s benchmark)",
			c.Completed, c.Placement.Method, c.Placement.Residual)
	}
	// Outside a recording's marks, the command's span is given.
	end := time.Now().Add(-time.Second).UTC().Truncate(time.Second)
	o.Reset()
	if code := dispatch([]string{"report", dir, "-format", "json", "-bench", src,
		"-bench-start", end.Add(-5 * time.Second).Format(time.RFC3339), "-bench-end", end.Format(time.RFC3339)}, &o, &e); code != 0 {
		t.Fatalf("report -bench exited %d: %s", code, e.String())
	}
	var given struct {
		Client struct {
			Placement struct {
				To time.Time `json:"to"`
			} `json:"placement"`
		} `json:"client"`
	}
	if err := json.Unmarshal([]byte(o.String()), &given); err != nil || !given.Client.Placement.To.Equal(end) {
		t.Errorf("placement with -bench-end %s: %+v %v", end, given.Client.Placement, err)
	}
	o.Reset()
	if code := dispatch([]string{"report", dir, "-format", "llmd-benchmark"}, &o, &e); code != 0 || !strings.Contains(o.String(), `"version": "0.2.1"`) {
		t.Errorf("llmd-benchmark export: exit %d, %.200s", code, o.String())
	}
}

func TestReportBenchUsage(t *testing.T) {
	junk := filepath.Join(t.TempDir(), "junk.json")
	if err := os.WriteFile(junk, []byte(`{"hello": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	f := func(want string, args ...string) {
		t.Helper()
		code, _, errs := runRep(args...)
		if code != 2 || !strings.Contains(errs, want) || strings.Count(strings.TrimSpace(errs), "\n") > 0 {
			t.Errorf("report %v: exit %d, stderr %q; want 2 and one line with %q", args, code, errs, want)
		}
	}
	f("-bench "+junk+": not a benchmark result", "-source", "prometheus=http://127.0.0.1:1", "-from", "1", "-to", "2", "-bench", junk)
	f("take one run", "a", "b", "-bench", junk)
	f("take one run", "a", "b", "-format", "llmd-benchmark")
	f("go together", "-bench-start", "1", "x")
	f("is not before", "-bench-start", "10", "-bench-end", "5", "x")
}

// TestReportJoinsTraces: report -traces joins an AIPerf record with the
// engine's traced request that carries its X-Request-ID inside vLLM's id.
func TestReportJoinsTraces(t *testing.T) {
	saved := loadRecording
	t.Cleanup(func() { loadRecording = saved })
	loadRecording = func(string) (report.Input, error) {
		sc, err := sim.LoadScenario("balanced")
		if err != nil {
			return report.Input{}, err
		}
		_, pts, _, err := simtest.Run(sc, 1, 20*time.Second)
		return report.Input{Points: pts, Meta: report.Meta{Interval: time.Second, Window: 5 * time.Second}}, err
	}
	tmp := t.TempDir()
	traces := filepath.Join(tmp, "traces.json")
	line := otlpLine(t, "d", 1, 0.4, 1.52, map[string]any{"gen_ai.request.id": "cmpl-7609a2e7-aa53-4ab1-0",
		"gen_ai.request.max_tokens": 100, "gen_ai.latency.time_in_queue": 0.09, "gen_ai.latency.time_to_first_token": 0.11,
		"gen_ai.latency.time_in_model_prefill": 0.01, "gen_ai.latency.time_in_model_decode": 1.0, "gen_ai.latency.e2e": 1.12})
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	rec := map[string]any{"metadata": map[string]any{"x_request_id": "7609a2e7-aa53-4ab1",
		"request_start_ns": t0.Add(390 * time.Millisecond).UnixNano(), "request_end_ns": t0.Add(1600 * time.Millisecond).UnixNano(),
		"benchmark_phase": "profiling"},
		"metrics": map[string]any{"time_to_first_token": map[string]any{"value": 130.0, "unit": "ms"},
			"request_latency": map[string]any{"value": 1210.0, "unit": "ms"}}, "error": nil}
	b, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	bench := filepath.Join(tmp, "profile_export.jsonl")
	for p, body := range map[string]string{traces: line + "\n", bench: string(b) + "\n"} {
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(tmp, "run")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runRep(dir, "-format", "json", "-bench", bench, "-traces", traces)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var rep struct {
		Client struct {
			Join *report.RequestJoin `json:"join"`
		} `json:"client"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	j := rep.Client.Join
	if j == nil || j.Joined != 1 || j.ArrivalDelay.P50 == nil || math.Abs(*j.ArrivalDelay.P50-0.01) > 1e-6 || j.TTFTOutside.P50 == nil {
		t.Fatalf("join %+v: want the one request joined, its arrival 10 ms after it was sent", j)
	}
	t.Logf("TTFT outside the engines: %g s", *j.TTFTOutside.P50)
}
