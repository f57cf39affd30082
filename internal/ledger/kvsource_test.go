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
