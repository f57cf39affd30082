package sim_test

import (
	"context"
	"fmt"
	"math"
	"net"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ptdmon/ptdmon/internal/journey"
	"github.com/ptdmon/ptdmon/internal/otlp"
	"github.com/ptdmon/ptdmon/internal/sim"
	"github.com/ptdmon/ptdmon/internal/testutil"
)

// TestTracesJoinToTruth runs the balanced scenario ten times faster than
// real time, sends its vLLM requests' traces to a real receiver and checks
// every joined phase against the simulator's truth.
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

	l := journey.NewLedger(0)
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
		n := len(ts.Truth())
		return n >= 40, fmt.Sprintf("%d requests traced", n)
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
