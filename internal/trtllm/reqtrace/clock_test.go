package reqtrace_test

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ptdmon/ptdmon/internal/trtllm/reqtrace"
	"github.com/ptdmon/ptdmon/internal/trtllm/reqtrace/reqtracetest"
)

// With random asymmetric legs, the chosen estimate is the least-delay probe
// (checked by brute force) and its ±δ/2 covers the true offset.
func TestRequestsProbesAsymmetric(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for trial := 0; trial < 200; trial++ {
		trueOff := (rng.Float64() - 0.5) * 2000 // up to ±1000 s
		var specs []reqtracetest.ProbeSpec
		n := 1 + rng.IntN(6)
		for i := 0; i < n; i++ {
			specs = append(specs, reqtracetest.ProbeSpec{
				Server: reqtracetest.GenServer, Originate: 5000 + float64(i),
				Out: rng.Float64() * 0.02, Back: rng.Float64() * 0.02, Proc: 0.2,
				Offset: trueOff, AsHeader: i%2 == 1,
			})
		}
		cs, err := reqtrace.ParseClockSync(reqtracetest.ClockSyncJSON(specs...))
		if err != nil {
			t.Fatal(err)
		}
		e, ok := cs.Lookup(reqtracetest.GenServer)
		if !ok || !e.Usable || e.Probes != n {
			t.Fatalf("estimate %+v ok=%v, want %d usable probes", e, ok, n)
		}
		// Brute force: delay is out+back in true time.
		best := specs[0]
		for _, s := range specs[1:] {
			if s.Out+s.Back < best.Out+best.Back {
				best = s
			}
		}
		wantOff := trueOff + (best.Out-best.Back)/2
		if math.Abs(e.Offset-wantOff) > 1e-8 || math.Abs(e.Delay-(best.Out+best.Back)) > 1e-8 {
			t.Fatalf("trial %d: offset %.9f delay %.9f, want least-delay probe's %.9f / %.9f", trial, e.Offset, e.Delay, wantOff, best.Out+best.Back)
		}
		if math.Abs(e.Offset-trueOff) > e.Uncertainty+1e-8 {
			t.Fatalf("trial %d: |%.9f − true %.9f| exceeds ±%.9f", trial, e.Offset, trueOff, e.Uncertainty)
		}
		if e.Uncertainty != e.Delay/2 {
			t.Fatalf("uncertainty %v is not delay/2 (%v)", e.Uncertainty, e.Delay)
		}
	}
}

func TestRequestsClockSyncInvalidProbes(t *testing.T) {
	in := `{"probes":[
	 {"server":"a:1","originate_ts":10,"destination_ts":9,"response":{"receive_ts":5,"transmit_ts":6}},
	 {"server":"b:1","originate_ts":10,"destination_ts":11,"response":{"receive_ts":20,"transmit_ts":20.2}},
	 {"server":"b:1","originate_ts":10,"destination_ts":10.5,"response":{"receive_ts":20,"transmit_ts":19}}]}`
	cs, err := reqtrace.ParseClockSync([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := cs.Lookup("a:1"); ok {
		t.Fatal("server with only invalid probes got an estimate")
	}
	e, ok := cs.Lookup("b:1")
	// θ = ((20−10)+(20.2−11))/2 = 9.6, δ = (11−10)−(20.2−20) = 0.8.
	if !ok || e.Invalid != 1 || e.Probes != 2 || math.Abs(e.Offset-9.6) > 1e-9 || math.Abs(e.Delay-0.8) > 1e-9 {
		t.Fatalf("b:1 = %+v", e)
	}
	for _, bad := range []string{
		`[]`, `{}`, `{"probes":[{"originate_ts":1,"destination_ts":2,"response":{"receive_ts":1,"transmit_ts":1}}]}`,
		`{"probes":[{"server":"x","originate_ts":1,"destination_ts":2}]}`,
		`{"probes":[{"server":"x","originate_ts":1,"destination_ts":2,"x_trtllm_clock_sync":"receive;ts=1"}]}`,
		`{"probes":[{"server":"x","destination_ts":2,"x_trtllm_clock_sync":"receive;ts=1, transmit;ts=2"}]}`,
	} {
		if _, err := reqtrace.ParseClockSync([]byte(bad)); err == nil {
			t.Errorf("ParseClockSync(%s) accepted", bad)
		} else if !strings.Contains(err.Error(), "clock-sync") {
			t.Errorf("error %q lacks context", err)
		}
	}
}

func TestRequestsClockSyncHeader(t *testing.T) {
	r, tr, err := reqtrace.ParseClockSyncHeader("receive;ts=73510.421522000, transmit;ts=73510.620104000")
	if err != nil || r != 73510.421522 || tr != 73510.620104 {
		t.Fatalf("got %v %v %v", r, tr, err)
	}
}
