package diagnose

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/ledger"
)

// Instances of constructed points: every value is chosen so that the
// right status follows from the rules by hand.

// outlierUp is an up instance with its windowed rate, running and waiting
// over a window of 5 s.
func outlierUp(name, role, eng string, window, running, waiting float64) ledger.InstancePoint {
	to := time.Unix(1700000000, 0)
	return ledger.InstancePoint{Target: name, Role: role, Engine: eng, Up: true, WindowFrom: to.Add(-5 * time.Second), WindowTo: to,
		Instant: ledger.Val(window), Window: ledger.Val(window), Running: ledger.Val(running), Waiting: ledger.Val(waiting),
		KVUsage: ledger.Val(0.5), KVBytes: ledger.Absent("no KV connector"), KVBytesW: ledger.Absent("no KV connector")}
}

// outlierDown has every value absent, as the ledger writes a down target.
func outlierDown(name, role, eng string) ledger.InstancePoint {
	a := ledger.Absent("target down: connection refused")
	return ledger.InstancePoint{Target: name, Role: role, Engine: eng, Instant: a, Window: a, KVBytes: a, KVBytesW: a,
		Running: a, Waiting: a, KVUsage: a, PromptTPS: a, GenTPS: a}
}

func outlierPoint(ins ...ledger.InstancePoint) *ledger.Point {
	return &ledger.Point{Time: time.Unix(1700000000, 0), Instances: ins}
}

func TestOutlierRules(t *testing.T) {
	// Four peers of one group and role at 20 req/s over 5 s (100
	// completions expected); p3 is the one under test.
	peers := func(w3, run3, wait3 float64, others ...float64) *ledger.Point {
		ins := []ledger.InstancePoint{}
		for i, w := range []float64{20, 20, 20} {
			wait := 2.0
			if len(others) > 0 {
				wait = others[i]
			}
			ins = append(ins, outlierUp(fmt.Sprintf("p%d", i), "prefill", "vllm", w, 4, wait))
		}
		return outlierPoint(append(ins, outlierUp("p3", "prefill", "vllm", w3, run3, wait3))...)
	}
	lastError := func(target string) string {
		return map[string]string{"p1": "dial tcp: connection refused"}[target]
	}
	f := func(name string, p *ledger.Point, want map[string]string, flag string) {
		t.Run(name, func(t *testing.T) {
			st := ClassifyInstances(p.Instances, 5, lastError)
			got := map[string]string{}
			for i, s := range st {
				got[p.Instances[i].Target] = s.Status
				if s.Status != StatusOrder[s.Rank] {
					t.Errorf("%s: status %q at rank %d", p.Instances[i].Target, s.Status, s.Rank)
				}
			}
			for n, w := range want {
				if got[n] != w {
					t.Errorf("%s: status %q, want %q (all: %v)", n, got[n], w, got)
				}
			}
			if flag == "" {
				return
			}
			for _, s := range st {
				if strings.Contains(strings.Join(s.Flags, "|"), flag) {
					return
				}
			}
			t.Errorf("no instance flagged %q: %+v", flag, st)
		})
	}
	ok4 := map[string]string{"p0": StatusOK, "p1": StatusOK, "p2": StatusOK, "p3": StatusOK}
	f("a steady group has no outlier", peers(20, 4, 2), ok4, "")
	f("idle: no work and no completions is not stalled", peers(0, 0, 0), map[string]string{"p3": StatusOK}, "")
	f("stalled: work and no completions over W", peers(0, 3, 1), map[string]string{"p3": StatusStalled},
		"stalled: 0 completions in 5 s, peers' median 100")
	f("stalled with only waiting requests", peers(0, 0, 1), map[string]string{"p3": StatusStalled}, "")
	short := peers(0, 3, 1)
	short.Instances[3].WindowFrom = short.Instances[3].WindowTo.Add(-2 * time.Second)
	f("a window under W/2 is too short for a stall", short, map[string]string{"p3": StatusOK}, "")
	short.Instances[3].WindowFrom = short.Instances[3].WindowTo.Add(-2500 * time.Millisecond)
	f("a window of W/2 is long enough", short, map[string]string{"p3": StatusStalled}, "stalled: 0 completions in 2.5 s, peers' median 50")
	// Waiting 2,2,2,x: median 2, threshold max(4, 5) = 5.
	f("queued: exactly the threshold is not", peers(20, 4, 5), map[string]string{"p3": StatusOK}, "")
	f("queued: over max(2×median, median+3)", peers(20, 4, 6), map[string]string{"p3": StatusQueued}, "queued: 6 waiting, over 5")
	// Waiting 0,0,0,x: median 0, threshold 3.
	f("queued: a median of 0 needs more than 3", peers(20, 4, 3, 0, 0, 0), map[string]string{"p3": StatusOK}, "")
	f("queued: 4 over a median of 0", peers(20, 4, 4, 0, 0, 0), map[string]string{"p3": StatusQueued}, "")
	// Windows 20,20,20,x: median 20, slow under 10.
	f("slow: half the median is not", peers(10, 4, 2), map[string]string{"p3": StatusOK}, "")
	f("slow: under half the median", peers(9.9, 4, 2), map[string]string{"p3": StatusSlow}, "slow: 9.9 req/s over 5 s, peers' median 20")
	f("slow needs work", peers(5, 0, 0), map[string]string{"p3": StatusOK}, "")
	f("stalled outranks queued", peers(0, 4, 9), map[string]string{"p3": StatusStalled}, "queued: 9 waiting")
	f("queued outranks slow", peers(5, 4, 9), map[string]string{"p3": StatusQueued}, "slow: 5 req/s")
	// At 0.4 req/s over 5 s the peers' median completes 2 requests:
	// none is what one instance in e^2 ≈ 7 shows by chance.
	low := func(w3 float64) *ledger.Point {
		return outlierPoint(outlierUp("p0", "decode", "vllm", 0.4, 2, 0), outlierUp("p1", "decode", "vllm", 0.4, 2, 0),
			outlierUp("p2", "decode", "vllm", 0.4, 2, 0), outlierUp("p3", "decode", "vllm", w3, 2, 0))
	}
	f("no completion at a low rate is chance, not a stall", low(0), map[string]string{"p3": StatusOK}, "")
	silent := low(0)
	for i := range silent.Instances {
		silent.Instances[i].Window = ledger.Val(0)
	}
	f("a whole silent group is stalled", silent, map[string]string{"p0": StatusStalled, "p3": StatusStalled},
		"stalled: 0 completions in 5 s on every vllm decode instance")
	// Median 2 req/s over 5 s: 10 expected; 4 completions (0.8 req/s)
	// happen with probability 0.029, 1 (0.2 req/s) with 5e-4, 0.4 of 10
	// with 1e-4 — below the 1e-4 only at 0 (4.5e-5).
	mid := func(w3 float64) *ledger.Point {
		return outlierPoint(outlierUp("p0", "prefill", "vllm", 2, 4, 0), outlierUp("p1", "prefill", "vllm", 2, 4, 0),
			outlierUp("p2", "prefill", "vllm", 2, 4, 0), outlierUp("p3", "prefill", "vllm", w3, 4, 0))
	}
	f("slow: under half the median but likely by chance", mid(0.8), map[string]string{"p3": StatusOK}, "")
	f("slow: one completion of ten expected is still chance", mid(0.2), map[string]string{"p3": StatusOK}, "")
	f("stalled: none of ten expected is not", mid(0), map[string]string{"p3": StatusStalled}, "")
	f("down, with the scrape error", outlierPoint(outlierUp("p0", "prefill", "vllm", 20, 4, 2), outlierDown("p1", "prefill", "vllm")),
		map[string]string{"p0": StatusOK, "p1": StatusDown}, "down: last scrape failed: dial tcp: connection refused")
	// Peers are the same verdict group and role: decode at 0.2 req/s is
	// not slow beside prefill at 2, and an SGLang prefill is not compared
	// with vLLM's.
	f("peers are per group and role", outlierPoint(
		outlierUp("p0", "prefill", "vllm", 2, 4, 2), outlierUp("p1", "prefill", "vllm", 2, 4, 2), outlierUp("p2", "prefill", "vllm", 2, 4, 2),
		outlierUp("d0", "decode", "vllm", 0.2, 4, 2), outlierUp("s0", "prefill", "sglang", 0.2, 4, 2)),
		map[string]string{"d0": StatusOK, "s0": StatusOK}, "")
	// A down peer's absent values are not zeros in the median: without
	// it, waiting 0,0,5 has median 0 and 5 > 3.
	f("down peers stay out of the medians", outlierPoint(
		outlierUp("p0", "prefill", "vllm", 2, 4, 0), outlierUp("p1", "prefill", "vllm", 2, 4, 0), outlierUp("p2", "prefill", "vllm", 2, 4, 5),
		outlierDown("p3", "prefill", "vllm"), outlierDown("p4", "prefill", "vllm")),
		map[string]string{"p2": StatusQueued}, "")
	// vLLM's sleep mode: an instance asleep serves nothing on purpose. With
	// requests waiting at it and none completed, it is neither stalled nor
	// a peer whose zero rate sets the norm: beside three asleep, 9.9 req/s
	// is still under half of the serving peers' 20.
	asleep := func(p *ledger.Point, state string, names ...string) *ledger.Point {
		for i := range p.Instances {
			if slices.Contains(names, p.Instances[i].Target) {
				p.Instances[i].Sleep = state
			}
		}
		return p
	}
	f("asleep with requests waiting is not stalled", asleep(peers(0, 0, 1), ledger.SleepWeightsOffloaded, "p3"),
		map[string]string{"p3": StatusOK}, "asleep: sleep mode, level 1 (weights offloaded, KV cache discarded)")
	f("asleep at level 2", asleep(peers(0, 3, 1), ledger.SleepDiscardAll, "p3"), map[string]string{"p3": StatusOK}, "asleep: sleep mode, level 2")
	f("asleep peers stay out of the medians", asleep(outlierPoint(
		outlierUp("p0", "prefill", "vllm", 20, 4, 2), outlierUp("p1", "prefill", "vllm", 20, 4, 2), outlierUp("p2", "prefill", "vllm", 9.9, 4, 2),
		outlierUp("a0", "prefill", "vllm", 0, 0, 0), outlierUp("a1", "prefill", "vllm", 0, 0, 0), outlierUp("a2", "prefill", "vllm", 0, 0, 0)),
		ledger.SleepPaused, "a0", "a1", "a2"),
		map[string]string{"p2": StatusSlow, "a0": StatusOK}, "asleep: sleep mode, no engine awake")
	absentWait := outlierUp("p3", "prefill", "vllm", 2, 4, 0)
	absentWait.Waiting = ledger.Absent("the engine exports no waiting gauge")
	f("an absent value flags nothing", outlierPoint(outlierUp("p0", "prefill", "vllm", 2, 4, 2), outlierUp("p1", "prefill", "vllm", 2, 4, 2), absentWait),
		map[string]string{"p3": StatusOK}, "")
}

// TestPoissonAtMost against closed forms and sums in exact rationals.
func TestPoissonAtMost(t *testing.T) {
	f := func(c, lambda, want float64) {
		t.Helper()
		if got := poissonAtMost(c, lambda); math.Abs(got-want) > 1e-9*max(want, 1e-300) && math.Abs(got-want) > 1e-15 {
			t.Errorf("P(X ≤ %g | λ=%g) = %g, want %g", c, lambda, got, want)
		}
	}
	f(0, 10, math.Exp(-10))
	f(1, 10, 11*math.Exp(-10))
	f(4, 10, math.Exp(-10)*(1+10+50+1000.0/6+10000.0/24)) // 0.0292527
	f(200, 3, 1)
	f(0, 0, 1)
	f(50, 100, 2.4015922356168156e-08) // e^-100 Σ 100^k/k! for k ≤ 50, summed in exact rationals
	f(100, 300, 0)
}

func TestMedian(t *testing.T) {
	f := func(vs []float64, want ledger.Num) {
		t.Helper()
		if got := Median(vs); got != want {
			t.Errorf("Median(%v) = %+v, want %+v", vs, got, want)
		}
	}
	f(nil, ledger.Absent("no peer has the value"))
	f([]float64{7}, ledger.Val(7))
	f([]float64{9, 1, 5}, ledger.Val(5))
	f([]float64{9, 1, 5, 2}, ledger.Val(3.5))
}
