package metrics_test

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/metrics"
)

// TestFailureClasses: a vLLM decode engine over NIXL reports 3 failed
// transfers, 2 lost notifications and 1 expired request; /metrics splits
// them by class and writes no series for the classes nobody reported
// (timeout, unclassified): absent, not 0.
func TestFailureClasses(t *testing.T) {
	const body = `# TYPE vllm:request_success_total counter
vllm:request_success_total{engine="0",finished_reason="stop",model_name="m"} 10
# TYPE vllm:nixl_num_failed_transfers_total counter
vllm:nixl_num_failed_transfers_total{engine="0",model_name="m"} 3
# TYPE vllm:nixl_num_failed_notifications_total counter
vllm:nixl_num_failed_notifications_total{engine="0",model_name="m"} 2
# TYPE vllm:nixl_num_kv_expired_reqs_total counter
vllm:nixl_num_kv_expired_reqs_total{engine="0",model_name="m"} 1
`
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	l := ledger.New(ledger.Config{Interval: time.Second, Window: 5 * time.Second})
	l.SetTargets([]engine.Target{{Name: "d0", URL: "http://10.0.0.2:8000/metrics", Role: engine.Decode, Engine: engine.VLLM}})
	rd := engine.NewReader(engine.VLLM, engine.Decode, engine.KVAuto)
	obs, err := rd.Read([]byte(body), "text/plain; version=0.0.4")
	if err != nil {
		t.Fatal(err)
	}
	l.Record(ledger.Scrape{Target: "d0", Time: t0, Duration: time.Millisecond, Obs: obs})
	l.Tick(t0)
	c := &metrics.Collector{Ledger: l, Now: func() time.Time { return t0 }}
	const want = `# HELP ptd_kv_transfer_failures_total Failed KV transfers reported by the instance by class (network, timeout, expiry, notification, unclassified), reset-adjusted.
# TYPE ptd_kv_transfer_failures_total counter
ptd_kv_transfer_failures_total{class="expiry",engine="vllm",model="m",role="decode",target="d0"} 1
ptd_kv_transfer_failures_total{class="network",engine="vllm",model="m",role="decode",target="d0"} 3
ptd_kv_transfer_failures_total{class="notification",engine="vllm",model="m",role="decode",target="d0"} 2
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want), "ptd_kv_transfer_failures_total"); err != nil {
		t.Error(err)
	}
}
