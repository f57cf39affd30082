package diagnose

import (
	"strings"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/ledger"
)

// restartWorld: one prefill and one decode instance, 4 req/s through both.
// Prefill waiting grows by 2/s until p0 goes down at 60 s for 3 s; after
// the restart its queue is empty and stays short.
func restartWorld(n int, downFor int) []ledger.Point {
	pts := make([]ledger.Point, n)
	for i := range pts {
		p := &pts[i]
		p.Time = t0.Add(time.Duration(i) * time.Second)
		down := i >= 60 && i < 60+downFor
		wait := float64(2 * i)
		if i >= 60 {
			wait = float64(i % 2)
		}
		pi := ledger.InstancePoint{Target: "p0", Role: "prefill", Engine: "vllm", Up: !down,
			Instant: ledger.Val(4), Window: ledger.Val(4), Waiting: ledger.Val(wait), Running: ledger.Val(4),
			KVBytes: ledger.Absent("no KV"), KVBytesW: ledger.Absent("no KV"), KVUsage: ledger.Val(0.2)}
		if down {
			why := ledger.Absent("down: connection refused")
			pi.Instant, pi.Window, pi.Waiting, pi.Running, pi.KVUsage = why, why, why, why, why
		}
		di := ledger.InstancePoint{Target: "d0", Role: "decode", Engine: "vllm", Up: true,
			Instant: ledger.Val(4), Window: ledger.Val(4), Waiting: ledger.Val(1), Running: ledger.Val(float64(20 + i%7)),
			KVBytes: ledger.Absent("no KV"), KVBytesW: ledger.Absent("no KV"), KVUsage: ledger.Val(0.3)}
		pi.Pool, di.Pool = "vllm", "vllm"
		p.Instances = []ledger.InstancePoint{pi, di}
		p.Prefill, p.Decode = stageOf(pi), stageOf(di)
		none := ledger.Absent("no KV")
		p.KV = ledger.KVPoint{Instant: none, Window: none, BytesInstant: none, BytesWindow: none, Transfers: none, Failures: none}
		p.Pools = []ledger.PoolPoint{{Name: "vllm", Instances: 2, Prefill: p.Prefill, KV: p.KV, Decode: p.Decode, Router: ledger.NoRouter("vllm")}}
	}
	return pts
}

// stageOf is the stage of one instance, as the ledger sums it.
func stageOf(ip ledger.InstancePoint) ledger.StagePoint {
	sp := ledger.StagePoint{Instances: 1, Instant: ip.Instant, Window: ip.Window, Waiting: ip.Waiting, Running: ip.Running, KVUsage: ip.KVUsage}
	if ip.Up {
		sp.Up = 1
	}
	if !ip.Window.OK() {
		sp.Missing = []string{ip.Target}
	}
	return sp
}

func TestRestartHoldsTheVerdict(t *testing.T) {
	cfg := Config{}
	// 20 s after the restart, the window (50–80 s) still contains it.
	v := Diagnose(restartWorld(81, 3), cfg)
	if v.Class != PrefillBound || !strings.Contains(strings.Join(v.Notes, "; "), "held across the restart of p0") {
		t.Fatalf("stage %s, evidence %q, notes %q", v.Class, v.Evidence, v.Notes)
	}
	// With too few points before the restart there is nothing to hold.
	pts := restartWorld(81, 3)
	if v := Diagnose(pts[55:], cfg); v.Class != Balanced {
		t.Fatalf("window alone: stage %s, evidence %q", v.Class, v.Evidence)
	}
	// Once the restart has left the window, the present speaks.
	if v := Diagnose(restartWorld(100, 3), cfg); v.Class != Balanced {
		t.Fatalf("restart out of the window: stage %s, notes %q", v.Class, v.Notes)
	}
	// One failed scrape is no restart.
	if v := Diagnose(restartWorld(81, 1), cfg); strings.Contains(strings.Join(v.Notes, "; "), "held") {
		t.Fatalf("a single failed scrape held the verdict: %q", v.Notes)
	}
}
