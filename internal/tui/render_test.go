package tui

import (
	"encoding/json"
	"strings"
	"testing"
)

const snapJSON = `{
 "time": "2026-11-29T12:00:00Z", "window_seconds": 5,
 "kv_request_bytes": {"bytes": 1073741824, "source": "flag"},
 "verdict": {"stage": "kv", "headline": "KV-bound: transfers lag prefill", "evidence": ["KV 6.0 req/s < prefill 7.0 req/s for 30 s"]},
 "point": {"time": "2026-11-29T12:00:00Z",
  "prefill": {"requests_per_second": 7.5, "requests_per_second_window": 7, "instances": 2, "instances_up": 1, "missing": ["p1"],
              "running": 4, "waiting": 2, "queues": {"bootstrap": 0, "inflight": 11}, "kv_cache_usage_ratio": 0.29},
  "kv": {"requests_per_second": 6, "requests_per_second_window": 6, "bytes_per_second": 6442450944, "bytes_per_second_window": 6442450944},
  "decode": {"requests_per_second": null, "requests_per_second_window": null,
             "absent": {"requests_per_second_window": "no decode instance configured"}},
  "instances": [
   {"target": "p0", "role": "prefill", "engine": "vllm", "up": true, "requests_per_second_window": 7, "kv_bytes_per_second_window": 6442450944, "running": 4, "waiting": 2},
   {"target": "p1", "role": "prefill", "engine": "sglang", "up": false, "requests_per_second_window": null}
  ]},
 "targets": [{"name": "p0", "up": true}, {"name": "p1", "up": false, "last_error": "GET http://p1/metrics: connection refused"}]
}`

func TestRender(t *testing.T) {
	var s Snapshot
	if err := json.Unmarshal([]byte(snapJSON), &s); err != nil {
		t.Fatal(err)
	}
	hist := []Point{*s.Point, *s.Point}
	hist[0].Prefill.Window = nil // a gap in the history
	var b strings.Builder
	Render(&b, &s, hist, 120)
	out := b.String()
	for _, want := range []string{
		"B_request 1.00 GiB (flag)",
		"VERDICT  KV-bound: transfers lag prefill",
		"· KV 6.0 req/s < prefill 7.0 req/s for 30 s",
		"Decode               —            —",
		"Decode absent: no decode instance configured",
		"Prefill partial: 1 of 2 up, missing p1",
		"KV bytes/s  instant 6.00 GiB/s",
		"inflight 11",
		"KV usage 29%",
		"DOWN",
		"connection refused",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("frame lacks %q:\n%s", want, out)
		}
	}
	// Absent values are never drawn as zeros, in the table or the sparkline.
	if strings.Contains(out, "Decode               0") {
		t.Errorf("absent decode rate drawn as 0:\n%s", out)
	}
	if got := sparkline([]*float64{nil, ptr(0), ptr(5), ptr(10)}, 10, 10); got != " ▁▄█" {
		t.Errorf("sparkline = %q", got)
	}
}

func ptr(v float64) *float64 { return &v }
