package ledger

import (
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/engine"
)

// A transfer library's endpoint beside an engine's connector counts each
// transfer once: a vLLM decode engine whose NIXL connector pulls 1 GiB/s,
// and the NIXL telemetry endpoint of the same process, whose agent counts
// the same pulls as received bytes, make 1 GiB/s, not 2. Without the
// engine's connector (SGLang over NIXL), the library's bytes are the KV
// bytes.
func TestTransferLibraryCountedOnce(t *testing.T) {
	const gib = 1 << 30
	// An engine named with a "-" suffix exports no KV bytes of its own.
	kv := func(e engine.Engine, bytes float64) *engine.Observation {
		o := &engine.Observation{Engine: e, Role: engine.Decode, Counters: []engine.CounterValue{{Metric: engine.Completed, Series: 1, Value: bytes / gib}}}
		if e[len(e)-1] != '-' {
			o.Counters = append(o.Counters, engine.CounterValue{Metric: engine.KVBytes, Series: 7, Value: bytes})
		} else {
			o.Engine = e[:len(e)-1]
		}
		return o
	}
	f := func(name string, targets []engine.Target, engines map[string]engine.Engine, want float64) {
		t.Helper()
		l := New(Config{Interval: time.Second, Window: 5 * time.Second})
		l.SetTargets(targets)
		var p Point
		for s := 0.0; s <= 5; s++ {
			for _, tg := range targets {
				l.Record(Scrape{Target: tg.Name, Time: at(s), Obs: kv(engines[tg.Name], s*gib)})
			}
			p = l.Tick(at(s))
		}
		wantVal(t, name+": kv bytes/s", p.KV.BytesWindow, want)
		wantVal(t, name+": global kv bytes", p.GlobalKVBytes, want*5)
	}
	both := []engine.Target{{Name: "d0", Role: engine.Decode}, {Name: "d0-nixl", Role: engine.Decode}}
	f("connector and library", both, map[string]engine.Engine{"d0": engine.VLLM, "d0-nixl": engine.NIXLTelemetry}, gib)
	f("library only", both, map[string]engine.Engine{"d0": engine.SGLang + "-", "d0-nixl": engine.NIXLTelemetry}, gib)
	f("two libraries", both, map[string]engine.Engine{"d0": engine.MooncakeTE, "d0-nixl": engine.NIXLTelemetry}, 2*gib)
}

// TestGlobalKVNeverGoesDown: the global KV counter is a counter. When an
// engine's connector starts counting the bytes a transfer library counted
// until then (its first good scrape comes after the library's), the
// library's bytes so far stay in it; when the engine goes, the library
// counts again from where it stands.
func TestGlobalKVNeverGoesDown(t *testing.T) {
	const gib = 1 << 30
	l := New(Config{Interval: time.Second, Window: 5 * time.Second})
	targets := []engine.Target{{Name: "d0", Role: engine.Decode}, {Name: "d0-nixl", Role: engine.Decode}}
	l.SetTargets(targets)
	obs := func(e engine.Engine, bytes float64) *engine.Observation {
		return &engine.Observation{Engine: e, Role: engine.Decode, Counters: []engine.CounterValue{{Metric: engine.KVBytes, Series: 7, Value: bytes}}}
	}
	// The library reads 100 GiB + 1 GiB/s from the start; the engine's
	// connector is unreachable for 10 s, then reads 5 GiB + 1 GiB/s (it
	// restarted more recently), and leaves the configuration at 20 s.
	var last float64
	for s := 0.0; s <= 30; s++ {
		var want float64
		l.Record(Scrape{Target: "d0-nixl", Time: at(s), Obs: obs(engine.NIXLTelemetry, (100+s)*gib)})
		switch {
		case s < 10:
			want = (100 + s) * gib
		case s <= 20:
			l.Record(Scrape{Target: "d0", Time: at(s), Obs: obs(engine.VLLM, (5+s-10)*gib)})
			// The library's 110 GiB at the tick that saw the engine stay;
			// the engine's counter adds its own.
			want = 110*gib + (5+s-10)*gib
		case s == 21:
			l.SetTargets(targets[1:])
			fallthrough
		default:
			// The engine's 15 GiB stay; the library counts from its 121 GiB
			// at the tick after the engine left.
			want = 110*gib + 15*gib + (s-21)*gib
		}
		p := l.Tick(at(s))
		if !p.GlobalKVBytes.OK() {
			t.Fatalf("t=%v: global KV bytes absent: %s", s, p.GlobalKVBytes.Why)
		}
		got := p.GlobalKVBytes.V
		if got < last {
			t.Fatalf("t=%v: the global KV counter went down from %.1f to %.1f GiB", s, last/gib, got/gib)
		}
		if got != want {
			t.Errorf("t=%v: global KV bytes %.1f GiB, want %.1f", s, got/gib, want/gib)
		}
		last = got
	}
}
