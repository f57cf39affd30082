package ledger_test

import (
	"fmt"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/sim"
	"github.com/ptdmon/ptdmon/internal/sim/simtest"
	"github.com/ptdmon/ptdmon/internal/slo"
)

// TestBucketsMatchEngines runs the simulator through the engine adapters
// into a ledger and requires the window's bucket counts of every instance
// to equal the increase of what the engine exported between the first and
// last scrapes inside W (46 s and 50 s for W = 5 s at 50 s), bucket by
// bucket, and the E2E rate to be those observations over the 4 s between.
func TestBucketsMatchEngines(t *testing.T) {
	sc, err := sim.LoadScenario("decode-bound")
	if err != nil {
		t.Fatal(err)
	}
	r, err := simtest.RunHistograms(sc, 1, 50*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	b, ok := r.Ledger.Buckets()
	if !ok {
		t.Fatal("no buckets after 50 points")
	}
	if b.Seconds != 5 {
		t.Errorf("window %g s, want 5", b.Seconds)
	}
	want := map[string][]slo.Hist{}
	var wantRate float64
	for i, in := range r.Instances {
		role := "prefill"
		if in.Role == sim.RoleDecode {
			role = "decode"
		}
		// A phase comes from the first source the instance exports
		// (SGLang's per-stage latency first); its key is the slot's.
		for _, ms := range [][]engine.Metric{{engine.TTFT}, {engine.ITL}, {engine.E2E}, {engine.StageWaiting, engine.QueueTime},
			{engine.StageForward, engine.PrefillTime}, {engine.DecodeTime}, {engine.StageKVTransfer, engine.KVXferTime},
			{engine.StageBootstrap, engine.KVBootstrapTime}} {
			var h engine.Histogram
			ok := false
			for _, src := range ms {
				if h, ok = r.Increase(i, src, 46, 50); ok {
					break
				}
			}
			if !ok {
				continue
			}
			m := ms[len(ms)-1]
			key := role + "/" + m.String()
			if m == engine.KVXferTime {
				key = m.String()
			}
			var sh slo.Hist
			for _, bk := range h.Buckets {
				sh.Bounds = append(sh.Bounds, bk.UpperBound)
				sh.Counts = append(sh.Counts, bk.Count)
			}
			sh.Sum, sh.Count = h.Sum, h.Count
			want[key] = append(want[key], sh)
			if role == "decode" && m == engine.E2E {
				wantRate += h.Count / 4
			}
		}
	}
	got := map[string][]slo.Hist{engine.KVXferTime.String(): b.KVXfer}
	for role, rb := range map[string]ledger.RoleBuckets{"prefill": b.Prefill, "decode": b.Decode} {
		got[role+"/"+engine.TTFT.String()] = rb.TTFT
		got[role+"/"+engine.ITL.String()] = rb.ITL
		got[role+"/"+engine.E2E.String()] = rb.E2E
		got[role+"/"+engine.QueueTime.String()] = rb.Queue
		got[role+"/"+engine.PrefillTime.String()] = rb.Prefill
		got[role+"/"+engine.DecodeTime.String()] = rb.Decode
		got[role+"/"+engine.KVBootstrapTime.String()] = rb.Bootstrap
	}
	if len(want) < 8 {
		t.Fatalf("the simulator exported only %d histogram kinds: %v", len(want), want)
	}
	// The ledger lists instances by name, the simulator in its own order.
	show := func(hs []slo.Hist) []string {
		out := make([]string, len(hs))
		for i, h := range hs {
			out[i] = fmt.Sprintf("%v %v sum=%v count=%v", h.Bounds, h.Counts, h.Sum, h.Count)
		}
		sort.Strings(out)
		return out
	}
	for k, ws := range want {
		g, w := show(got[k]), show(ws)
		if !slices.Equal(g, w) {
			t.Errorf("%s:\n got %q\nwant %q", k, g, w)
		}
	}
	if wantRate <= 0 || b.Decode.E2ERate != wantRate {
		t.Errorf("decode E2E rate %g, want %g", b.Decode.E2ERate, wantRate)
	}
	if b.Decode.Up != 3 || b.Prefill.Up != 3 {
		t.Errorf("up: prefill %d decode %d, want 3 and 3", b.Prefill.Up, b.Decode.Up)
	}
}

// BenchmarkBuckets reads the window's buckets of six simulated instances,
// as /api/v1/advice does on every request.
func BenchmarkBuckets(b *testing.B) {
	sc, err := sim.LoadScenario("decode-bound")
	if err != nil {
		b.Fatal(err)
	}
	r, err := simtest.RunHistograms(sc, 1, 30*time.Second)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := r.Ledger.Buckets(); !ok {
			b.Fatal("no buckets")
		}
	}
}
