package diagnose

import (
	"strings"
	"testing"

	"github.com/ptdmon/ptdmon/internal/ledger"
)

// withFailures gives every point one pool whose KV failures are f.
func withFailures(pts []ledger.Point, f ledger.Failures) []ledger.Point {
	for i := range pts {
		pts[i].Pools = []ledger.PoolPoint{{Name: "chat", Failures: f}}
	}
	return pts
}

func failureRate(perSecond, ratio float64) ledger.FailureRate {
	return ledger.FailureRate{PerSecond: ledger.Val(perSecond), Ratio: ledger.Val(ratio)}
}

// A verdict that rests on failures names them: decode falling behind
// because it recomputes failed KV loads is not called slow; KV trailing
// prefill because transfers fail is not called slow either. Below the
// thresholds, and with no source that counts failures, the verdict is as
// before.
func TestFailuresChangeThePicture(t *testing.T) {
	decodeBound := func() world {
		w := balancedWorld()
		w.d = konst(6)
		w.dWait = ramp(5, 2)
		return w
	}
	kvBound := func() world {
		w := balancedWorld()
		w.kv, w.d = konst(6), konst(6)
		w.dWait = ramp(2, 2)
		w.boot, w.infl, w.prea, w.xfer = nil, nil, nil, nil
		return w
	}
	recompute := ledger.AbsentFailures("no target of the pool counts it")
	recompute.Network = failureRate(1.6, 0.12)
	recompute.Recomputed = failureRate(16000, 0.12)
	decodeOnly := ledger.AbsentFailures("no target of the pool counts it")
	decodeOnly.Recomputed = failureRate(16000, 0.12)
	expiring := ledger.AbsentFailures("no target of the pool counts it")
	expiring.Expiry = failureRate(2, 0.25)
	expiring.Timeout = failureRate(0.01, 0.004) // under the note's threshold
	few := ledger.AbsentFailures("no target of the pool counts it")
	few.Network = failureRate(0.05, 0.006)
	few.Recomputed = failureRate(400, 0.03)

	f := func(name string, w world, fails *ledger.Failures, class Class, headline string, notes ...string) {
		t.Helper()
		pts := w.points(40, 3)
		if fails != nil {
			pts = withFailures(pts, *fails)
		}
		v := Diagnose(pts, Config{})
		if v.Class != class {
			t.Errorf("%s: class %s, want %s (%q)", name, v.Class, class, v.Evidence)
		}
		if v.Headline != headline {
			t.Errorf("%s: headline %q, want %q", name, v.Headline, headline)
		}
		all := strings.Join(v.Notes, " | ")
		for _, n := range notes {
			if !strings.Contains(all, n) {
				t.Errorf("%s: notes %q lack %q", name, v.Notes, n)
			}
		}
		if len(notes) == 0 && strings.Contains(all, "fail") {
			t.Errorf("%s: a failure note below the thresholds: %q", name, v.Notes)
		}
	}
	f("decode recomputes failed loads", decodeBound(), &recompute, DecodeBound,
		"Decode-bound by failed KV loads: 12% of decode's prompt tokens were recomputed on decode",
		"12% of the prompt tokens decode processed were recomputed on decode after failed KV loads (network 12% (1.6/s)): decode is doing prefill work")
	f("decode computes prompts without failures counted", decodeBound(), &decodeOnly, DecodeBound,
		"Decode-bound by prefill work on decode: 12% of its prompt tokens were computed on decode",
		"for requests that skipped prefill")
	f("KV leases expire", kvBound(), &expiring, KVBound,
		"KV transfers failing: 25% of those attempted failed (expiry 25% (2/s))",
		"KV transfers failed over the window: expiry 25% (2/s) of those attempted")
	f("a few failures", decodeBound(), &few, DecodeBound, Headline(DecodeBound))
	f("no source counts failures", decodeBound(), nil, DecodeBound, Headline(DecodeBound))
	f("balanced with failures", balancedWorld(), &recompute, Balanced,
		"Balanced: no stage is limiting, while 12% of KV loads fail and decode recomputes them", "decode is doing prefill work")
}
