package diagnose

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestSingleDipKeepsDecodeBound: a decode batch of 4 held at its limit with
// 20 requests waiting in front of it (llm-d-inference-sim, 2 prefill + 1
// decode) is Decode-bound; one sample of 3 running instead of 4 anywhere in
// the pin span does not make it Balanced.
func TestSingleDipKeepsDecodeBound(t *testing.T) {
	world := func(dip int) world {
		w := balancedWorld()
		w.p, w.kv, w.d = konst(2), konst(2), konst(2)
		w.boot, w.infl, w.prea, w.xfer = nil, nil, nil, nil
		w.pWait = konst(1)
		w.dWait = konst(20)
		w.dRun = func(i int) float64 {
			if i == dip {
				return 3
			}
			return 4
		}
		return w
	}
	for seed := int64(1); seed <= 3; seed++ {
		if v := Diagnose(world(-1).points(40, seed), Config{}); v.Class != DecodeBound {
			t.Fatalf("seed %d, no dip: %q, want decode-bound; evidence %q", seed, v.Class, v.Evidence)
		}
		for dip := 40 - PinSeconds - 1; dip < 40; dip++ {
			v := Diagnose(world(dip).points(40, seed), Config{})
			if v.Class != DecodeBound {
				t.Errorf("seed %d, 3 running at second %d of 40: %q, want decode-bound; evidence %q", seed, dip, v.Class, v.Evidence)
			}
		}
	}
}

// TestHeldQueueEvidenceAgrees: the count a held queue's evidence states is
// the one its seconds come from (seconds × the stage's rate), not the trend
// fit's end: a prefill queue that held 40 and drained in the last seconds
// once read "holds 0 requests ≈ 4.1 s".
func TestHeldQueueEvidenceAgrees(t *testing.T) {
	re := regexp.MustCompile(`(prefill waiting|prefill inflight queue) holds (\d+) requests ≈ ([\d.]+) s`)
	f := func(name string, w world) {
		t.Run(name, func(t *testing.T) {
			seen := false
			for seed := int64(1); seed <= 5; seed++ {
				v := Diagnose(w.points(40, seed), Config{})
				for _, e := range v.Evidence {
					m := re.FindStringSubmatch(e)
					if m == nil {
						continue
					}
					seen = true
					n, _ := strconv.ParseFloat(m[2], 64)
					secs, _ := strconv.ParseFloat(m[3], 64)
					// The world's queues hold 40 for most of the window at 8 req/s.
					if n < 30 || math.Abs(secs-n/8) > 0.25*secs {
						t.Errorf("seed %d: %q: %g requests is not %g s at about 8 req/s", seed, e, n, secs)
					}
				}
			}
			if !seen {
				t.Fatal("no held-queue evidence in any seed")
			}
		})
	}
	drains := func(i int) float64 {
		if i >= 35 {
			return 0
		}
		return 40
	}
	w := balancedWorld()
	w.pWait = drains
	f("prefill waiting", w)
	w = balancedWorld()
	w.infl, w.pKV = drains, konst(0.5)
	f("inflight", w)
}

// TestDecodeOnlyIsNotAFault: with 40% of requests sent straight to decode,
// decode completes more than prefill; the verdict stays Balanced and says
// how many requests went without remote prefill.
func TestDecodeOnlyIsNotAFault(t *testing.T) {
	w := balancedWorld()
	w.p, w.kv, w.d = konst(6), konst(6), konst(10)
	re := regexp.MustCompile(`decode completes (\d+\.\d) req/s, prefill (\d+\.\d) req/s: (\d+\.\d) req/s \((\d+)%\) are served without remote prefill`)
	for seed := int64(1); seed <= 5; seed++ {
		v := Diagnose(w.points(40, seed), Config{})
		if v.Class != Balanced {
			t.Errorf("seed %d: %q, want balanced: %q", seed, v.Class, v.Evidence)
		}
		var m []string
		for _, n := range v.Traffic {
			if m = re.FindStringSubmatch(n); m != nil {
				break
			}
		}
		if m == nil {
			t.Errorf("seed %d: no decode-only line in %q", seed, v.Traffic)
			continue
		}
		if pct, _ := strconv.Atoi(m[4]); pct < 30 || pct > 50 {
			t.Errorf("seed %d: %s%% served without remote prefill, want about 40%%", seed, m[4])
		}
	}
	// Balanced traffic has no such note.
	for seed := int64(1); seed <= 5; seed++ {
		for _, n := range Diagnose(balancedWorld().points(40, seed), Config{}).Traffic {
			if strings.Contains(n, "without remote prefill") {
				t.Errorf("seed %d: balanced traffic noted as decode-only: %q", seed, n)
			}
		}
	}
}
