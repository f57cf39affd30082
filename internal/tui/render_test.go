package tui

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ptdmon/ptdmon/internal/ledger"
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
	hist := []Tick{{Point: *s.Point}, {Point: *s.Point}}
	hist[0].Prefill.Window = ledger.Absent("down") // a gap in the history
	var b strings.Builder
	Render(&b, &s, hist, 120)
	out := b.String()
	for _, want := range []string{
		"B_request 1.00 GiB (flag)",
		"VERDICT  KV-bound: transfers lag prefill",
		"· KV 6.0 req/s < prefill 7.0 req/s for 30 s",
		"Decode" + strings.Repeat(" ", 13) + "—" + strings.Repeat(" ", 11) + "—",
		"Decode absent: no decode instance configured",
		"Prefill partial: 1 of 2 up, missing p1",
		"KV bytes/s  instant 6.00 GiB/s  5s window 6.00 GiB/s",
		"5s rate, last 3 ticks",
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
	if strings.Contains(out, "Decode"+strings.Repeat(" ", 13)+"0") {
		t.Errorf("absent decode rate drawn as 0:\n%s", out)
	}
	if got := sparkline([]ledger.Num{ledger.Absent("down"), ledger.Val(0), ledger.Val(5), ledger.Val(10)}, 10, 10); got != " ▁▄█" {
		t.Errorf("sparkline = %q", got)
	}
}

// TestRenderFits: every line fits the width, the note keeps its start, and
// unusual states are said in words.
func TestRenderFits(t *testing.T) {
	load := func() Snapshot {
		var s Snapshot
		if err := json.Unmarshal([]byte(snapJSON), &s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	long := load()
	long.Targets[1].LastError = "GET http://p1.example.internal:8000/metrics: dial tcp 10.0.0.1:8000: connect: connection refused while the engine restarts"
	unset := load()
	unset.KVRequest.Bytes = 0
	down := load()
	for i := range down.Targets {
		down.Targets[i].Up = false
		down.Targets[i].LastError = `GET http://p0/metrics: Get "http://p0/metrics": dial tcp 10.0.0.1:8000: connect: connection refused`
	}
	f := func(name string, s Snapshot, width int, want ...string) {
		t.Run(name, func(t *testing.T) {
			var b strings.Builder
			Render(&b, &s, nil, width)
			out := b.String()
			for l := range strings.Lines(out) {
				if n := len([]rune(strings.TrimSuffix(l, "\n"))); n > max(width, MinWidth) {
					t.Errorf("line of %d columns > %d: %q", n, max(width, MinWidth), l)
				}
			}
			for _, w := range want {
				if !strings.Contains(out, w) {
					t.Errorf("frame lacks %q:\n%s", w, out)
				}
			}
		})
	}
	f("80 columns", load(), 80, "last 1 ticks")
	wordy := load()
	wordy.Verdict.Evidence = []string{"4 of 4 points over 3 s have both prefill and decode req/s; need 10 at least for a verdict"}
	f("evidence wrapped, not cut", wordy, 80, "need 10 at\n", "\n           least for a verdict\n")
	f("narrowest", load(), 40, "ptdmon") // drawn at MinWidth
	f("note cut from the right", long, 80, "  p1: GET http://p1.example.internal:8000/metrics: dial tcp", "…")
	f("B_request unset", unset, 80, "B_request not configured\n", "KV req/s absent: set -kv-bytes-per-request or -model-config\n")
	f("all targets down", down, 80, "ALL 2 TARGETS DOWN\n  p0: GET http://p0/metrics: dial tcp 10.0.0.1:8000: connect: connection refused\n")
}

func TestBytesUnits(t *testing.T) {
	f := func(vs []float64, want ...string) {
		t.Helper()
		ps := make([]ledger.Num, len(vs))
		for i := range vs {
			ps[i] = ledger.Val(vs[i])
		}
		got := byteColumn(ps)
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("byteColumn(%v) = %q, want %q", vs, got, want)
		}
	}
	f([]float64{1024 * 1024 * 1024, 2.75 * (1 << 30)}, "1.00 GiB/s", "2.75 GiB/s")
	f([]float64{(1 << 30) - 1, 512 << 20}, "1.00 GiB/s", "0.50 GiB/s") // 1023.999 MiB rounds into GiB
	f([]float64{0, 1536}, "0.00 KiB/s", "1.50 KiB/s")
	f([]float64{100}, "100.00 B/s")
}

// TestKVAbsentSaysWhy: with B_request unset and no target exporting KV
// bytes, the frame gives the ledger's reason, not advice to set B_request.
func TestKVAbsentSaysWhy(t *testing.T) {
	var s Snapshot
	if err := json.Unmarshal([]byte(snapJSON), &s); err != nil {
		t.Fatal(err)
	}
	s.KVRequest.Bytes = 0
	const noKV = "no target exports a KV byte counter (vLLM's NIXL, Mooncake)"
	s.Point.KV.Window, s.Point.KV.BytesWindow = ledger.Absent(noKV), ledger.Absent(noKV)
	var b strings.Builder
	Render(&b, &s, nil, 120)
	out := b.String()
	if !strings.Contains(out, "KV req/s absent: "+noKV+"\n") || strings.Contains(out, "set -kv-bytes-per-request") {
		t.Errorf("frame does not give the ledger's reason alone:\n%s", out)
	}
}
