package record

import (
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/ledger"
)

// TestReplayKeepsEachTargetsReadsInOrder: a recording that places one
// target's read after newer reads of it (a wrong order: here the read at
// 9.7 s is written as taken after a tick at 20 s) replays without the
// stale read: no counter of the target reads as reset, its rate shows no
// spike, and the points before it equal the live ones.
func TestReplayKeepsEachTargetsReadsInOrder(t *testing.T) {
	dir := t.TempDir()
	rec := testRecording(t, dir)
	l := ledger.New(ledger.Config{Interval: time.Second, Window: 5 * time.Second, History: 100, Tap: rec})
	l.SetTargets([]engine.Target{{Name: "p0", Role: engine.Prefill, Engine: engine.VLLM}})
	obs := func(n float64) *engine.Observation {
		return &engine.Observation{Engine: engine.VLLM, Role: engine.Prefill, Model: "m",
			Counters: []engine.CounterValue{{Metric: engine.Completed, Series: 1, Value: n}}}
	}
	t0 := time.Unix(1_800_000_000, 0)
	for s := 1; s <= 15; s++ {
		at := t0.Add(time.Duration(s) * time.Second)
		if s == 10 {
			rec.lastTick = t0.Add(20 * time.Second)
		}
		l.Record(ledger.Scrape{Target: "p0", Time: at.Add(-300 * time.Millisecond), Obs: obs(float64(10 * s))})
		l.Tick(at)
	}
	live := l.Since(time.Time{})
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	run, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	replayed, err := run.Replay(time.Time{}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range replayed.Targets(t0.Add(16 * time.Second)) {
		if st.CounterResets != 0 {
			t.Errorf("%s: %d counter resets in the replay; the live run had none", st.Name, st.CounterResets)
		}
	}
	got := replayed.Since(time.Time{})
	if len(got) != len(live) {
		t.Fatalf("replay has %d points, live %d", len(got), len(live))
	}
	for i := range live {
		if i < 9 {
			if d := diffPoints(live[i], got[i]); d != "" {
				t.Errorf("point %d: %s", i, d)
			}
		}
		// 10 completions a second throughout: no spike, no dip to 0.
		if w := got[i].Prefill.Window; w.OK() && (w.V > 10.5 || w.V < 9.5) {
			t.Errorf("point %d: prefill %.2f req/s over W, live %v", i, w.V, live[i].Prefill.Window)
		}
	}
}

// A read's place is the time of the tick before it reached the ledger. A
// recording of an earlier version measured that place on the monotonic
// clock, which drifts from the wall clock's tick times by the slew: the
// read then sat a few microseconds before its tick and was fed a tick
// early, so that every instant rate of the replay was the live one of the
// next tick. Here each place is written 3 µs early, as such a drift writes
// it; the replay still feeds each read after its tick, and every point,
// instant rates included, is the live one.
func TestReplayPlacesReadsOnTheirTicks(t *testing.T) {
	dir := t.TempDir()
	rec := testRecording(t, dir)
	l := ledger.New(ledger.Config{Interval: time.Second, Window: 5 * time.Second, History: 100, Tap: rec})
	l.SetTargets([]engine.Target{{Name: "p0", Role: engine.Prefill, Engine: engine.VLLM}})
	t0 := time.Unix(1_800_000_000, 102_000_000)
	n := 0.0
	for s := 1; s <= 30; s++ {
		at := t0.Add(time.Duration(s) * time.Second)
		l.Tick(at)
		rec.lastTick = at.Add(-3 * time.Microsecond) // the drifted place
		// The read comes 700 ms after the tick; its count grows unevenly,
		// so each instant rate differs from the next.
		n += float64(s%4 + 1)
		l.Record(ledger.Scrape{Target: "p0", Time: at.Add(700 * time.Millisecond),
			Obs: &engine.Observation{Engine: engine.VLLM, Role: engine.Prefill, Model: "m",
				Counters: []engine.CounterValue{{Metric: engine.Completed, Series: 1, Value: n}}}})
	}
	live := l.Since(time.Time{})
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	run, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	got, err := run.Points(time.Time{}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(live) {
		t.Fatalf("replay has %d points, live %d", len(got), len(live))
	}
	for i := range live {
		if d := diffPoints(live[i], got[i]); d != "" {
			t.Errorf("point %d: %s", i, d)
		}
	}
}
