package service

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/api"
	"github.com/ptdmon/ptdmon/internal/config"
	"github.com/ptdmon/ptdmon/internal/journey"
	"github.com/ptdmon/ptdmon/internal/testutil"
	"github.com/ptdmon/ptdmon/internal/trtllm/reqtrace/reqtracetest"
)

// TestPerfMetricsToRequests runs serve against a TensorRT-LLM disaggregated
// server on loopback whose GET /perf_metrics answers each request once:
// /api/v1/requests lists every request once, by the engine's id, with its
// true phases, and without an OTLP port.
func TestPerfMetricsToRequests(t *testing.T) {
	steady := float64(time.Now().UnixNano())/1e9 - 1e9
	ts := reqtracetest.Timelines(12, 5, steady-30)
	var mu sync.Mutex
	pending := ts
	trt := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if r.URL.Path != "/perf_metrics" {
			http.NotFound(w, r)
			return
		}
		var items []string
		for _, tl := range pending[:min(5, len(pending))] {
			items = append(items, tl.DisaggA(reqtracetest.Offsets{}))
		}
		pending = pending[min(5, len(pending)):]
		fmt.Fprint(w, "["+strings.Join(items, ",")+"]")
	}))
	defer trt.Close()

	cfg := &config.Config{Listen: "127.0.0.1:0", Interval: config.Duration{Duration: 50 * time.Millisecond},
		OTLP:    config.OTLP{PerfMetrics: []config.PerfMetricsSource{{URL: trt.URL + "/perf_metrics", Pool: "trt"}}},
		Targets: []config.Target{{Name: "p0", URL: "http://127.0.0.1:1/metrics", Role: "prefill"}}}
	cfg.SetDefaults()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	web := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- Run(ctx, cfg, Options{Ready: func(a string) { web <- a }}) }()
	t.Cleanup(func() { cancel(); <-done })
	base := <-web

	var body api.RequestsResponse
	testutil.Eventually(t, 10*time.Second, 50*time.Millisecond, func() (bool, string) {
		resp, err := http.Get("http://" + base + "/api/v1/requests?pool=trt&limit=1000")
		if err != nil {
			t.Fatal(err)
		}
		body = api.RequestsResponse{}
		err = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		return body.Total >= len(ts), fmt.Sprintf("total %d, want %d", body.Total, len(ts))
	})
	if body.Total != len(ts) {
		t.Fatalf("total %d, want %d", body.Total, len(ts))
	}
	// /metrics counts the records filed.
	resp, err := http.Get("http://" + base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	want := fmt.Sprintf("ptd_trtllm_perf_metrics_records_total{source=%q} %d\n", trt.URL+"/perf_metrics", len(ts))
	if !strings.Contains(string(metrics), want) {
		t.Errorf("/metrics lacks %q", want)
	}
	byID := map[string]api.RequestJSON{}
	for _, r := range body.Requests {
		byID[r.ID] = r
	}
	for _, tl := range ts {
		r, ok := byID[strconv.FormatUint(tl.ID, 10)]
		if !ok {
			t.Fatalf("request %d not listed", tl.ID)
		}
		w := tl.Want()
		if math.Abs(r.Phases[journey.PhaseKVTransfer]-w.KV) > 1e-6 || math.Abs(r.Phases[journey.PhaseQueue]-w.Queue) > 1e-6 {
			t.Errorf("%s phases %v, want kv %v queue %v", r.ID, r.Phases, w.KV, w.Queue)
		}
	}
}
