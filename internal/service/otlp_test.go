package service

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/ptdmon/ptdmon/internal/api"
	"github.com/ptdmon/ptdmon/internal/config"
	"github.com/ptdmon/ptdmon/internal/journey"
)

// TestOTLPToRequests sends one disaggregated request's two legs to serve's
// OTLP port as OTLP/HTTP JSON and reads it back from /api/v1/requests.
func TestOTLPToRequests(t *testing.T) {
	cfg := &config.Config{Listen: "127.0.0.1:0", OTLP: config.OTLP{Listen: "127.0.0.1:0"},
		Targets: []config.Target{{Name: "p0", URL: "http://127.0.0.1:1/metrics", Role: "prefill"}}}
	cfg.SetDefaults()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	web, traces := make(chan string, 1), make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, cfg, Options{Ready: func(a string) { web <- a }, OTLPReady: func(a string) { traces <- a }})
	}()
	t.Cleanup(func() { cancel(); <-done })
	otlpAddr, base := <-traces, <-web

	// The timeline: arrival at 0; on prefill 20 ms queue and 300 ms
	// prefill, leg ends at 0.321; decode arrives at 0.325, waits for the
	// KV until 0.4, then 2 s of decode.
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	at := func(s float64) pcommon.Timestamp { return pcommon.NewTimestampFromTime(t0.Add(time.Duration(s * 1e9))) }
	td := ptrace.NewTraces()
	leg := func(service string, start, end float64, attrs map[string]any) {
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr("service.name", service)
		s := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
		s.SetName("llm_request")
		s.SetTraceID([16]byte{7, 7, 7})
		s.SetSpanID([8]byte{byte(len(service))})
		s.SetStartTimestamp(at(start))
		s.SetEndTimestamp(at(end))
		if err := s.Attributes().FromRaw(attrs); err != nil {
			t.Fatal(err)
		}
	}
	leg("prefill", 0, 0.321, map[string]any{"gen_ai.request.id": "r1", "gen_ai.request.max_tokens": 1,
		"gen_ai.latency.time_in_queue": 0.02, "gen_ai.latency.time_to_first_token": 0.32,
		"gen_ai.latency.time_in_model_prefill": 0.3, "gen_ai.latency.time_in_model_decode": 0.0, "gen_ai.usage.prompt_tokens": 8000})
	leg("decode", 0.325, 2.41, map[string]any{"gen_ai.request.id": "r1", "gen_ai.request.max_tokens": 512,
		"gen_ai.latency.time_in_queue": 0.074, "gen_ai.latency.time_to_first_token": 0.085,
		"gen_ai.latency.time_in_model_prefill": 0.01, "gen_ai.latency.time_in_model_decode": 1.99,
		"gen_ai.latency.e2e": 2.085, "gen_ai.usage.completion_tokens": 512})
	body, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post("http://"+otlpAddr+"/v1/traces", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("export: %s", resp.Status)
	}
	var got api.RequestsResponse
	r, err := http.Get("http://" + base + "/api/v1/requests")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	if err := json.NewDecoder(r.Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	if got.Total != 1 || len(got.Requests) != 1 {
		t.Fatalf("%d requests (%+v), want 1", got.Total, got)
	}
	q := got.Requests[0]
	want := map[journey.Phase]float64{
		journey.PhaseQueue: 0.02, journey.PhasePrefill: 0.3,
		journey.PhaseKVTransfer: 0.4 - 0.321, // prefill leg's end to decode's scheduling (0.325+0.085-0.01)
		journey.PhaseDecode:     0.01 + 1.99,
	}
	for ph, w := range want {
		if math.Abs(q.Phases[ph]-w) > 1e-6 {
			t.Errorf("%s = %v, want %v", ph, q.Phases[ph], w)
		}
	}
	if _, ok := q.Phases[journey.PhaseDecodeQueue]; ok || q.Absent[journey.PhaseDecodeQueue] == "" {
		t.Errorf("decode_queue known without a KV span: %v", q.Phases)
	}
	if q.ID != "r1" || q.PrefillInstance != "prefill" || q.DecodeInstance != "decode" || q.E2E == nil || math.Abs(*q.E2E-2.41) > 1e-6 {
		t.Errorf("request %+v", q)
	}

	// A bad export is counted, and the accepted one's spans are.
	bad, err := http.Post("http://"+otlpAddr+"/v1/traces", "application/x-protobuf", strings.NewReader("\xff\xff garbage"))
	if err != nil {
		t.Fatal(err)
	}
	bad.Body.Close()
	metrics := getText(t, "http://"+base+"/metrics")
	for _, want := range []string{`ptd_otlp_exports_total{outcome="accepted"} 1`, `ptd_otlp_exports_total{outcome="invalid"} 1`, "ptd_otlp_spans_total 2"} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// TestOTLPStopsWithRun: when Run fails after the receiver started (here a
// -source it cannot read), the OTLP port is let go before Run returns.
func TestOTLPStopsWithRun(t *testing.T) {
	cfg := &config.Config{Listen: "127.0.0.1:0", OTLP: config.OTLP{Listen: "127.0.0.1:0"}, Source: "nonsense"}
	cfg.SetDefaults()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	traces := make(chan string, 1)
	err := Run(ctx, cfg, Options{OTLPReady: func(a string) { traces <- a }})
	if err == nil {
		t.Fatal("Run with an unreadable source returned no error")
	}
	addr := <-traces
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Fatalf("the OTLP port %s still accepts connections after Run returned", addr)
	}
}
