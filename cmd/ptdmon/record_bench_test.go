package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/benchresult"
	"github.com/ptdmon/ptdmon/internal/benchresult/benchgen"
)

// TestRecordKeepsTheBenchmarkResult: record wraps a load generator that
// writes a vLLM bench serve result where its --result-dir flag says;
// record finds and keeps it, and the report of the recording shows the
// client view anchored to the command's end, and exports it for
// llm-d-benchmark's tooling.
func TestRecordKeepsTheBenchmarkResult(t *testing.T) {
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
