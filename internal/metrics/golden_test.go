package metrics_test

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/expfmt"

	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/kvsize"
	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/metrics"
)

var updateGolden = flag.Bool("update-golden", false, "rewrite testdata/metrics.golden")

// prefillExposition is a vLLM prefill engine with a FlagCX connector after
// n completions of 8192-token prompts, each moving 1 GiB of KV cache.
func prefillExposition(n int) []byte {
	return fmt.Appendf(nil, `# TYPE vllm:request_success_total counter
vllm:request_success_total{engine="0",finished_reason="length",model_name="m"} %d
vllm:request_success_total{engine="0",finished_reason="abort",model_name="m"} 3
# TYPE vllm:prompt_tokens_total counter
vllm:prompt_tokens_total{engine="0",model_name="m"} %d
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="m"} 3
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{engine="0",model_name="m"} 1
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{engine="0",model_name="m"} 0.25
# TYPE vllm:flagcx_total_bytes_transferred_total counter
vllm:flagcx_total_bytes_transferred_total{engine="0",model_name="m"} %d
# TYPE vllm:flagcx_transfers_total counter
vllm:flagcx_transfers_total{engine="0",model_name="m"} %d
`, n, n*8192, int64(n)<<30, n)
}

// TestMetricsGolden: /metrics of a ledger fed six scrapes, one a second, of
// a prefill engine completing 4 requests/s (4 GiB/s of KV cache at
// B_request = 1 GiB) and of a decode engine that never answers. The golden
// file holds what a reader checks by hand: 4 req/s for prefill and KV,
// instant and over 5 s, no decode series (absent, not 0), the down
// target's failures, and the totals (100 + 4×5 completions, aborts not
// counted).
func TestMetricsGolden(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	l := ledger.New(ledger.Config{Interval: time.Second, Window: 5 * time.Second, KVRequest: kvsize.Request{Bytes: 1 << 30}})
	l.SetTargets([]engine.Target{
		{Name: "p0", URL: "http://10.0.0.1:8000/metrics", Role: engine.Prefill, Engine: engine.VLLM},
		{Name: "d0", URL: "http://10.0.0.2:8000/metrics", Role: engine.Decode, Engine: engine.VLLM},
	})
	rd := engine.NewReader(engine.VLLM, engine.Prefill, engine.KVAuto)
	var now time.Time
	for i := range 6 {
		now = t0.Add(time.Duration(i) * time.Second)
		obs, err := rd.Read(prefillExposition(100+4*i), "text/plain; version=0.0.4")
		if err != nil {
			t.Fatal(err)
		}
		l.Record(ledger.Scrape{Target: "p0", Time: now, Duration: 10 * time.Millisecond, Bytes: 900, Obs: obs})
		l.Record(ledger.Scrape{Target: "d0", Time: now, Duration: 800 * time.Millisecond, Err: fmt.Errorf("connection refused"), Reason: "connect"})
		l.Tick(now)
	}
	c := &metrics.Collector{Ledger: l, Now: func() time.Time { return now }, Stage: func() string { return "insufficient" }}
	golden := filepath.Join("testdata", "metrics.golden")
	if *updateGolden {
		reg := prometheus.NewPedanticRegistry()
		reg.MustRegister(c)
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		enc := expfmt.NewEncoder(&got, expfmt.NewFormat(expfmt.TypeTextPlain))
		for _, mf := range mfs {
			if n := mf.GetName(); strings.HasPrefix(n, "go_") || strings.HasPrefix(n, "process_") || n == "ptd_build_info" {
				continue
			}
			if err := enc.Encode(mf); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (go test ./internal/metrics -update-golden writes it)", err)
	}
	// The golden file holds the ledger's families; the process's own
	// (go_*, process_*, ptd_build_info) change with every run.
	var names []string
	for _, m := range regexp.MustCompile(`(?m)^# TYPE (\S+) `).FindAllSubmatch(want, -1) {
		names = append(names, string(m[1]))
	}
	if err := testutil.CollectAndCompare(c, bytes.NewReader(want), names...); err != nil {
		t.Error(err)
	}
}
