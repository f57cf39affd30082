package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ptdmon/ptdmon/internal/api"
	"github.com/ptdmon/ptdmon/internal/journey"
)

// otlpLine is one OTLP JSON export line holding one llm_request span.
func otlpLine(t *testing.T, service string, trace byte, start, end float64, attrs map[string]any) string {
	t.Helper()
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	at := func(s float64) pcommon.Timestamp { return pcommon.NewTimestampFromTime(t0.Add(time.Duration(s * 1e9))) }
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", service)
	s := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	s.SetName("llm_request")
	s.SetTraceID([16]byte{trace})
	s.SetSpanID([8]byte{trace, byte(len(service))})
	s.SetStartTimestamp(at(start))
	s.SetEndTimestamp(at(end))
	if err := s.Attributes().FromRaw(attrs); err != nil {
		t.Fatal(err)
	}
	var m ptrace.JSONMarshaler
	b, err := m.MarshalTraces(td)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestRequestsOTLPFile(t *testing.T) {
	prefill := func(trace byte, queue float64) string {
		// queue, then 0.3 s of prefill; the leg ends 1 ms after its token.
		return otlpLine(t, "p", trace, 0, queue+0.301, map[string]any{"gen_ai.request.max_tokens": 1,
			"gen_ai.latency.time_in_queue": queue, "gen_ai.latency.time_to_first_token": queue + 0.3,
			"gen_ai.latency.time_in_model_prefill": 0.3, "gen_ai.latency.time_in_model_decode": 0.0})
	}
	// The decode leg arrives at 0.4, is scheduled at 0.5, decodes for 1 s.
	decode := otlpLine(t, "d", 1, 0.4, 1.52, map[string]any{"gen_ai.request.max_tokens": 100,
		"gen_ai.latency.time_in_queue": 0.09, "gen_ai.latency.time_to_first_token": 0.11,
		"gen_ai.latency.time_in_model_prefill": 0.01, "gen_ai.latency.time_in_model_decode": 1.0, "gen_ai.latency.e2e": 1.12})
	dir := t.TempDir()
	file := filepath.Join(dir, "traces.json")
	lines := []string{decode, `{"resourceSpans": [ torn`, prefill(1, 0.05), prefill(2, 0.2)}
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := run(t, "-json", file)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "traces.json:2") {
		t.Errorf("torn line not reported: %q", stderr)
	}
	var rep api.RequestsResponse
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Total != 2 {
		t.Fatalf("%d requests, want 2", rep.Total)
	}
	got := map[string]api.RequestJSON{}
	for _, r := range rep.Requests {
		got[r.Legs] = r
	}
	j, p := got["prefill+decode"], got["prefill"]
	want := map[string]float64{"queue": 0.05, "prefill": 0.3, "kv_transfer": 0.5 - 0.351, "decode": 1.01}
	for ph, w := range want {
		if v, ok := j.Phases[journey.Phase(ph)]; !ok || math.Abs(v-w) > 1e-6 {
			t.Errorf("joined %s = %v, want %v", ph, v, w)
		}
	}
	if p.Phases[journey.PhaseQueue] < 0.199 || p.Absent[journey.PhaseDecode] == "" {
		t.Errorf("prefill only: %+v", p)
	}
	code, stdout, _ = run(t, file)
	if code != 0 || !strings.Contains(stdout, "2 requests: 1 joined") {
		t.Errorf("text report (exit %d):\n%s", code, stdout)
	}
	if code, _, _ := run(t, "-html", filepath.Join(dir, "x.html"), file); code != 2 {
		t.Errorf("-html with OTLP: exit %d, want 2", code)
	}
}
