package sim_test

import (
	"context"
	"fmt"
	"math"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ptdmon/ptdmon/internal/journey"
	"github.com/ptdmon/ptdmon/internal/otlp"
	"github.com/ptdmon/ptdmon/internal/sim"
	"github.com/ptdmon/ptdmon/internal/testutil"
)

// TestTracesJoinToTruth runs the balanced scenario ten times faster than
// real time, sends its vLLM and SGLang requests' traces to a real receiver
// and checks every joined phase against the simulator's truth.
func TestTracesJoinToTruth(t *testing.T) {
	sc, err := sim.LoadScenarioFrom("", "balanced")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, err := sim.Start(ctx, sc, sim.Options{Seed: 3, Speed: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	l := journey.NewBook(0)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := otlp.New(otlp.Config{}, func(td ptrace.Traces) { l.Add(journey.Extract(td)) }, nil)
	done := make(chan error, 1)
	go func() { done <- r.Serve(ctx, ln) }()
	defer func() { cancel(); <-done }()

	ts := c.SendTraces(ctx, "http://"+ln.Addr().String()+"/v1/traces", 200*time.Millisecond)
	testutil.Eventually(t, 30*time.Second, 100*time.Millisecond, func() (bool, string) {
		n := map[string]int{}
		for _, tr := range ts.Truth() {
			n[tr.Engine]++
		}
		return n["vllm"] >= 40 && n["sglang"] >= 10, fmt.Sprintf("requests traced per engine: %v", n)
	})
	recs := map[string]journey.Record{}
	for _, rec := range l.Records() {
		recs[rec.ID] = rec
	}
	truth := ts.Truth()
	for _, tr := range truth {
		rec, ok := recs[tr.ID]
		if !ok {
			t.Errorf("%s: not in the ledger", tr.ID)
			continue
		}
		if !rec.Complete() || rec.PrefillInstance != tr.Prefill || rec.DecodeInstance != tr.Decode {
			t.Errorf("%s: legs %q on %s/%s, want %s/%s", tr.ID, rec.Legs, rec.PrefillInstance, rec.DecodeInstance, tr.Prefill, tr.Decode)
		}
		for ph, want := range map[journey.Phase]float64{
			journey.PhaseQueue: tr.Queue, journey.PhasePrefill: tr.PrefillDur, journey.PhaseKVTransfer: tr.KVTransfer,
			journey.PhaseDecodeQueue: tr.DecodeQueue, journey.PhaseDecode: tr.DecodeDur,
		} {
			got, ok := rec.Phase(ph)
			if !ok || math.Abs(got-want) > 1e-3 {
				t.Errorf("%s %s = %v (known %v), want %v; absent: %q", tr.ID, ph, got, ok, want, rec.Absent[ph])
			}
		}
		if d := rec.Arrival.Sub(tr.Arrival); d < -time.Millisecond || d > time.Millisecond {
			t.Errorf("%s arrival off by %v", tr.ID, d)
		}
	}
	t.Logf("%d requests checked against truth; %d records in the ledger", len(truth), len(recs))
}

// TestPhaseHistogramsAgree stops simulated time at one minute and checks
// that the decode phase histogram of the joined requests of the vLLM pool
// equals, bucket for bucket, what the vLLM decode engines' own
// vllm:request_inference_time_seconds histograms say: both time the decode
// engine's scheduling to the last token, over the same requests.
func TestPhaseHistogramsAgree(t *testing.T) {
	sc, err := sim.LoadScenarioFrom("", "balanced")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	var now atomic.Int64
	now.Store(start.UnixNano())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, err := sim.Start(ctx, sc, sim.Options{Seed: 5, Clock: func() time.Time { return time.Unix(0, now.Load()) }})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	l := journey.NewBook(0)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := otlp.New(otlp.Config{}, func(td ptrace.Traces) { l.Add(journey.Extract(td)) }, nil)
	done := make(chan error, 1)
	go func() { done <- r.Serve(ctx, ln) }()
	defer func() { cancel(); <-done }()
	c.SendTraces(ctx, "http://"+ln.Addr().String()+"/v1/traces", 20*time.Millisecond)
	now.Store(start.Add(time.Minute).UnixNano())

	// The engines' own histograms at that moment, summed over the vLLM
	// decode instances.
	var engineCount uint64
	var engineSum float64
	engineBuckets := map[float64]uint64{}
	for _, tg := range c.Targets() {
		if tg.Engine != "vllm" || tg.Role != "decode" {
			continue
		}
		resp, err := http.Get(tg.URL)
		if err != nil {
			t.Fatal(err)
		}
		p := expfmt.NewTextParser(model.UTF8Validation)
		fams, err := p.TextToMetricFamilies(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		fam := fams["vllm:request_inference_time_seconds"]
		if fam == nil {
			t.Fatalf("%s: no vllm:request_inference_time_seconds", tg.Name)
		}
		for _, m := range fam.GetMetric() {
			h := m.GetHistogram()
			engineCount += h.GetSampleCount()
			engineSum += h.GetSampleSum()
			for _, b := range h.GetBucket() {
				engineBuckets[b.GetUpperBound()] += b.GetCumulativeCount()
			}
		}
	}
	if engineCount < 50 {
		t.Fatalf("only %d requests decoded in a minute", engineCount)
	}
	var h *journey.Histogram
	testutil.Eventually(t, 20*time.Second, 20*time.Millisecond, func() (bool, string) {
		page := journey.Select(l.Records(), journey.Query{Pool: "vllm"})
		h = journey.Histograms(page.Records)[journey.PhaseDecode]
		return uint64(h.Count) == engineCount, fmt.Sprintf("%d requests joined, the engines decoded %d", h.Count, engineCount)
	})
	if math.Abs(h.Sum-engineSum) > 1e-6 {
		t.Errorf("sum %v s, the engines' %v s", h.Sum, engineSum)
	}
	for i, le := range h.Le {
		if uint64(h.Buckets[i]) != engineBuckets[le] {
			t.Errorf("le=%g: %d joined requests, the engines count %d", le, h.Buckets[i], engineBuckets[le])
		}
	}
}
