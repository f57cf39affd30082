package diagnose

import (
	"math"
	"math/rand"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/ledger"
)

// world describes a synthetic deployment: each field returns the value at
// second i; nil means the signal is absent (not exported).
type world struct {
	p, kv, d                             func(i int) float64 // true rates
	pWait, dWait, boot, infl, prea, xfer func(i int) float64
	pKV                                  func(i int) float64
	dRun                                 func(i int) float64 // decode running, exact (a pinned batch does not jitter)
}

var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// points renders n ticks with Poisson-like noise on the rates (instant) and
// ±1 jitter on the queues, so the thresholds are tested against noise.
func (w world) points(n int, seed int64) []ledger.Point {
	rng := rand.New(rand.NewSource(seed))
	noisy := func(r float64) float64 { return math.Max(0, r+rng.NormFloat64()*math.Sqrt(r)) }
	gauge := func(f func(int) float64, i int) ledger.Num {
		if f == nil {
			return ledger.Absent("no gauge in the exposition")
		}
		return ledger.Val(math.Max(0, math.Round(f(i)+rng.Float64()*2-1)))
	}
	rate := func(f func(int) float64, i int) (ledger.Num, ledger.Num) {
		if f == nil {
			return ledger.Absent("B_request is not set"), ledger.Absent("B_request is not set")
		}
		// The windowed rate averages five instant ones: less noise.
		return ledger.Val(noisy(f(i))), ledger.Val(f(i) + rng.NormFloat64()*math.Sqrt(f(i)/5))
	}
	out := make([]ledger.Point, n)
	for i := range out {
		p := &out[i]
		p.Time = t0.Add(time.Duration(i) * time.Second)
		p.Prefill.Instant, p.Prefill.Window = rate(w.p, i)
		p.KV.Instant, p.KV.Window = rate(w.kv, i)
		p.Decode.Instant, p.Decode.Window = rate(w.d, i)
		p.Prefill.Waiting = gauge(w.pWait, i)
		p.Decode.Waiting = gauge(w.dWait, i)
		p.Prefill.Queues.Bootstrap = gauge(w.boot, i)
		p.Prefill.Queues.Inflight = gauge(w.infl, i)
		p.Decode.Queues.Prealloc = gauge(w.prea, i)
		p.Decode.Queues.Transfer = gauge(w.xfer, i)
		if w.dRun != nil {
			p.Decode.Running = ledger.Val(w.dRun(i))
		} else {
			p.Decode.Running = ledger.Absent("no gauge")
		}
		if w.pKV != nil {
			p.Prefill.KVUsage = ledger.Val(w.pKV(i))
		} else {
			p.Prefill.KVUsage = ledger.Absent("no gauge")
		}
	}
	return out
}

func konst(v float64) func(int) float64 { return func(int) float64 { return v } }
func ramp(from, perSec float64) func(int) float64 {
	return func(i int) float64 { return from + perSec*float64(i) }
}

// balancedWorld is 8 req/s through every stage with small steady queues.
func balancedWorld() world {
	return world{
		p: konst(8), kv: konst(8), d: konst(8),
		pWait: konst(1), dWait: konst(2), boot: konst(0), infl: konst(1), prea: konst(0), xfer: konst(1),
		pKV: konst(0.2),
	}
}

func TestVerdicts(t *testing.T) {
	cases := []struct {
		name  string
		w     func() world
		want  Class
		words []string // regexps, each must match the evidence
	}{
		{"balanced", balancedWorld, Balanced, []string{`prefill \d+\.\d, KV \d+\.\d, decode \d+\.\d req/s: none trails`, "no hand-off"}},
		{"balanced without queue metrics (vLLM)", func() world {
			w := balancedWorld()
			w.boot, w.infl, w.prea, w.xfer = nil, nil, nil, nil
			return w
		}, Balanced, nil},
		{"prefill-bound: prefill waiting grows, downstream keeps up", func() world {
			w := balancedWorld()
			w.pWait = ramp(5, 1.5)
			return w
		}, PrefillBound, []string{`prefill waiting \+1\.[45]\d?/s \(\d+ → \d+\)`}},
		{"kv-bound by rates: KV below prefill", func() world {
			w := balancedWorld()
			w.kv, w.d = konst(6), konst(6)
			w.dWait = ramp(2, 2) // vLLM counts requests awaiting their KV as waiting
			w.boot, w.infl, w.prea, w.xfer = nil, nil, nil, nil
			return w
		}, KVBound, []string{`KV [56]\.\d req/s < prefill [78]\.\d req/s \(−\d\d%\) for 30 s`}},
		{"kv-bound by the SGLang inflight queue, B_request unset", func() world {
			w := balancedWorld()
			w.kv = nil
			w.infl = ramp(2, 1) // 12% of the 8 req/s piling up
			return w
		}, KVBound, []string{`prefill inflight queue \+(0\.9\d?|1(\.\d)?)/s`}},
		{"kv-bound, saturated: inflight full, prefill waiting grows behind it", func() world {
			w := balancedWorld()
			w.p, w.kv, w.d = konst(6), konst(6), konst(6)
			w.infl = konst(50)
			w.pWait = ramp(10, 2)
			w.boot = ramp(0, 1)
			w.pKV = konst(0.93)
			return w
		}, KVBound, []string{`inflight queue holds (49|5\d) requests ≈ [789]\.\d s`, `prefill waiting \+2/s \(\d+ → \d+\) behind it`, "KV cache 93% full"}},
		{"decode-bound by rates: decode below KV", func() world {
			w := balancedWorld()
			w.d = konst(6)
			w.dWait = ramp(5, 2)
			return w
		}, DecodeBound, []string{`decode [567]\.\d req/s < KV [78]\.\d req/s`, `decode waiting \+2/s`}},
		{"decode-bound, saturated: batch pinned, decode waiting and prealloc grow, KV throttled", func() world {
			w := balancedWorld()
			w.kv, w.d = konst(7.2), konst(7.2)
			w.dRun = konst(64)
			w.dWait = ramp(100, 2.5)
			w.prea = ramp(0, 0.7)
			return w
		}, DecodeBound, []string{`decode batch pinned at 64 running on 1 of 1`, `decode waiting \+2\.5/s`, `decode prealloc queue \+0\.[67]\d?/s`}},
		{"pull-gated KV: decode full, so KV trailing prefill is decode's doing", func() world {
			w := balancedWorld()
			w.kv, w.d = konst(5), konst(5)
			w.dRun = konst(32)
			w.dWait = konst(40)
			w.pKV = konst(0.95)
			w.pWait = ramp(3, 1)
			w.boot, w.infl, w.prea, w.xfer = nil, nil, nil, nil
			return w
		}, DecodeBound, []string{`decode batch pinned at 32`, `KV [45]\.\d req/s trails prefill [78]\.\d req/s because decode admits no more`}},
		{"slot-bound decode admission: prealloc grows, batch below its limit", func() world {
			w := balancedWorld()
			w.dRun = func(i int) float64 { return 20 + float64(i%5) }
			w.prea = ramp(0, 0.8)
			w.boot = ramp(0, 0.8)
			return w
		}, AdmissionBound, []string{`decode prealloc queue`}},
		{"decode admission bound: bootstrap and prealloc grow", func() world {
			w := balancedWorld()
			w.boot = ramp(0, 0.8)
			w.prea = ramp(0, 0.8)
			return w
		}, AdmissionBound, []string{`decode prealloc queue \+0\.[78]\d?/s`, `prefill bootstrap queue \+0\.[78]\d?/s`}},
		{"noise is not a trend: queues jump around a level", func() world {
			w := balancedWorld()
			w.pWait = func(i int) float64 { return float64((i * 7) % 5) }
			w.dWait = func(i int) float64 { return float64((i * 3) % 4) }
			return w
		}, Balanced, nil},
		{"a short burst that drains is not a trend", func() world {
			w := balancedWorld()
			w.pWait = func(i int) float64 {
				if i >= 10 && i < 14 {
					return 12
				}
				return 1
			}
			return w
		}, Balanced, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for seed := int64(1); seed <= 5; seed++ {
				v := Diagnose(tc.w().points(40, seed), Config{})
				if v.Class != tc.want {
					t.Fatalf("seed %d: stage %q, want %q\nevidence: %q\nnotes: %q", seed, v.Class, tc.want, v.Evidence, v.Notes)
				}
				ev := strings.Join(v.Evidence, "; ")
				for _, w := range tc.words {
					if !regexp.MustCompile(w).MatchString(ev) {
						t.Errorf("seed %d: evidence %q lacks %q", seed, ev, w)
					}
				}
				if v.Headline != Headline(tc.want) || len(v.Evidence) == 0 {
					t.Errorf("seed %d: headline %q, evidence %q", seed, v.Headline, v.Evidence)
				}
				if v.Window < 29 || v.Window > 30 || v.Samples < 30 {
					t.Errorf("seed %d: window %.1f s over %d samples; want the last 30 s", seed, v.Window, v.Samples)
				}
			}
		})
	}
}

func TestNotEnoughData(t *testing.T) {
	if v := Diagnose(nil, Config{}); v.Class != Insufficient {
		t.Fatalf("no points: %q", v.Class)
	}
	v := Diagnose(balancedWorld().points(6, 1), Config{})
	if v.Class != Insufficient || !strings.Contains(v.Evidence[0], "6 of 6 points") {
		t.Fatalf("6 points: %+v", v)
	}
	// Rates absent (targets down) for most of the window: still not enough.
	pts := balancedWorld().points(40, 1)
	for i := range pts[:35] {
		pts[i].Decode.Instant = ledger.Absent("down: connection refused")
	}
	v = Diagnose(pts, Config{})
	if v.Class != Insufficient {
		t.Fatalf("decode absent: %+v", v)
	}
	pts = balancedWorld().points(40, 1)
	for i := range pts {
		pts[i].Decode.Instant = ledger.Absent("down: connection refused")
	}
	v = Diagnose(pts, Config{})
	if v.Class != Insufficient || len(v.Notes) == 0 || !strings.Contains(v.Notes[0], "connection refused") {
		t.Fatalf("decode always absent: the reason should be a note: %+v", v)
	}
}

func TestAbsentKVIsANote(t *testing.T) {
	w := balancedWorld()
	w.kv = nil
	v := Diagnose(w.points(40, 2), Config{})
	if v.Class != Balanced {
		t.Fatalf("stage %q", v.Class)
	}
	if len(v.Notes) == 0 || !strings.Contains(v.Notes[0], "B_request is not set") {
		t.Fatalf("notes %q should say why KV req/s is absent", v.Notes)
	}
}

func TestWindowOnlyLooksBack(t *testing.T) {
	// Prefill waiting grew long ago, then drained for more than the window:
	// that is history, not the present bottleneck.
	w := balancedWorld()
	w.pWait = func(i int) float64 {
		if i < 30 {
			return float64(i) * 2
		}
		return math.Max(1, 60-float64(i-30)*10)
	}
	v := Diagnose(w.points(80, 3), Config{})
	if v.Class != Balanced {
		t.Fatalf("stage %q evidence %q", v.Class, v.Evidence)
	}
	v = Diagnose(w.points(80, 3)[:30], Config{})
	if v.Class != PrefillBound {
		t.Fatalf("while it grew: stage %q evidence %q", v.Class, v.Evidence)
	}
}

func TestStartUpIsNotADecodeShortfall(t *testing.T) {
	// Decode completes nothing for 8 s while the first requests go through
	// prefill and transfer, then ramps up: the pipeline filling.
	w := balancedWorld()
	w.d = func(i int) float64 {
		switch {
		case i < 8:
			return 0
		case i < 16:
			return float64(i-8) + 0.5
		}
		return 8
	}
	w.dWait = func(i int) float64 { return math.Min(float64(i), 8) }
	for seed := int64(1); seed <= 5; seed++ {
		for _, n := range []int{12, 20, 30} {
			v := Diagnose(w.points(n, seed), Config{})
			if v.Class == DecodeBound {
				t.Fatalf("seed %d, %d s after start: %q %q %q", seed, n, v.Class, v.Evidence, v.Notes)
			}
		}
		v := Diagnose(w.points(30, seed), Config{})
		if v.Class != Balanced || len(v.Notes) == 0 || !strings.Contains(v.Notes[0], "filling") {
			t.Fatalf("seed %d, 30 s: %q %q %q", seed, v.Class, v.Evidence, v.Notes)
		}
	}
}

func TestStalledDecodeIsDecodeBound(t *testing.T) {
	// A decode that completes nothing for the whole window is no start-up.
	w := balancedWorld()
	w.d = konst(0)
	w.dWait = ramp(10, 3)
	v := Diagnose(w.points(40, 1), Config{})
	if v.Class != DecodeBound || !regexp.MustCompile(`decode 0\.0 req/s < KV [78]\.\d`).MatchString(v.Evidence[0]) {
		t.Fatalf("%q %q %q", v.Class, v.Evidence, v.Notes)
	}
}
