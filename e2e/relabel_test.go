package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/gen"
	"github.com/ptdmon/ptdmon/internal/testutil"
)

// TestPrometheusRelabelling checks the generated scrape config in the real
// Prometheus: every engine target gets ptd_target/ptd_role/ptd_engine, and
// a TensorRT-LLM target is scraped on /prometheus/metrics (its /metrics is
// JSON, drained on read, and must be left alone).
func TestPrometheusRelabelling(t *testing.T) {
	t.Parallel()
	promBin := prometheusBin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	serve := func(path string) *httptest.Server {
		mux := http.NewServeMux()
		mux.HandleFunc(path, func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/plain; version=0.0.4")
			fmt.Fprintln(w, "# TYPE x_total counter\nx_total 1")
		})
		return httptest.NewServer(mux)
	}
	vllm, trt := serve("/metrics"), serve("/prometheus/metrics")
	defer vllm.Close()
	defer trt.Close()
	// file_sd targets: ptd_target names one; the deprecated ptd_name still
	// names another; without either, the name is host:port.
	sd1, sd2, sd3 := serve("/metrics"), serve("/metrics"), serve("/metrics")
	defer sd1.Close()
	defer sd2.Close()
	defer sd3.Close()
	dir := t.TempDir()
	sdFile := filepath.Join(dir, "targets.json")
	host := func(s *httptest.Server) string { u, _ := url.Parse(s.URL); return u.Host }
	// Pools: file_sd's short pool label becomes ptd_pool, and ptd_pool
	// wins where both are given.
	sd := fmt.Sprintf(`[{"targets": [%q], "labels": {"ptd_target": "sd-new", "ptd_role": "decode", "pool": "chat"}},
 {"targets": [%q], "labels": {"ptd_name": "sd-old", "ptd_role": "prefill", "ptd_pool": "code", "pool": "chat"}},
 {"targets": [%q], "labels": {"ptd_role": "decode"}}]`, host(sd1), host(sd2), host(sd3))
	if err := os.WriteFile(sdFile, []byte(sd), 0o644); err != nil {
		t.Fatal(err)
	}
	in := gen.Input{Targets: []engine.Target{
		{Name: "vllm-p0", URL: vllm.URL + "/metrics", Role: "prefill", Engine: "vllm", Labels: map[string]string{"ptd_pool": "llama"}},
		{Name: "trt-d0", URL: trt.URL, Role: "decode", Engine: "trtllm"},
	}, FileSD: []string{sdFile}, PtdmonAddr: "127.0.0.1:1"}
	cfg, err := gen.PrometheusConfig(in)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	promURL := startPrometheus(t, ctx, promBin, dir, filepath.Join(dir, "prometheus.yml"))

	want := map[string]map[string]string{
		"vllm-p0": {"ptd_role": "prefill", "ptd_engine": "vllm", "ptd_pool": "llama", "job": gen.JobEngines},
		"trt-d0":  {"ptd_role": "decode", "ptd_engine": "trtllm", "ptd_pool": "", "job": gen.JobEngines},
		"sd-new":  {"ptd_role": "decode", "ptd_pool": "chat", "job": gen.JobEngines},
		"sd-old":  {"ptd_role": "prefill", "ptd_name": "", "ptd_pool": "code", "job": gen.JobEngines},
		host(sd3): {"ptd_role": "decode", "ptd_pool": "", "job": gen.JobEngines},
	}
	var got map[string]map[string]string
	testutil.Eventually(t, 20*time.Second, 500*time.Millisecond, func() (bool, string) {
		got = upTargets(t, promURL)
		return len(got) == len(want), fmt.Sprintf("%d targets up, want %d: %v", len(got), len(want), got)
	})
	for name, labels := range want {
		g, ok := got[name]
		if !ok {
			t.Errorf("target %s not up with ptd_target=%s (got %v)", name, name, got)
			continue
		}
		for k, v := range labels {
			if g[k] != v {
				t.Errorf("target %s: %s=%q, want %q", name, k, g[k], v)
			}
		}
	}
}

// upTargets returns the labels of every engine target whose last scrape
// succeeded, by ptd_target.
func upTargets(t *testing.T, promURL string) map[string]map[string]string {
	t.Helper()
	resp, err := http.Get(promURL + "/api/v1/query?" + url.Values{"query": {`up{job="` + gen.JobEngines + `"} == 1`}}.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct {
		Data struct {
			Result []struct{ Metric map[string]string }
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]string{}
	for _, res := range r.Data.Result {
		out[res.Metric["ptd_target"]] = res.Metric
	}
	return out
}
