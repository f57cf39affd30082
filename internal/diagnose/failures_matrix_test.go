package diagnose_test

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/diagnose"
	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/sim"
)

// The matrix's failure cell: vLLM over NIXL where 20% of KV loads fail in
// the network and decode recomputes them. Failed loads move no KV, so KV
// trails prefill; recomputed prompts are prefill work on decode. The
// verdict must name the failures at every checkpoint, never call a stage
// slow for them; and the ledger's failure shares must be the simulator's.
func TestVerdictNamesFailedKVLoads(t *testing.T) {
	f := flavours[1] // vllm-nixl
	g := group(f, "vllm", sim.StageNone, 1, false)
	g.Failures = sim.FailureSpec{Ratio: 0.2, Class: sim.FailNetwork}
	sc := scenario("failed-loads", g)
	headlines := map[string]int{}
	// The verdict groups by pool, as the API does: the pool is the model.
	pts, model, pool := judgedPoolRun(t, sc, 7, 150*time.Second, 50*time.Second, 5*time.Second, func(at time.Duration, gv diagnose.GroupVerdict) string {
		notes := strings.Join(gv.Notes, " | ")
		headlines[gv.Headline]++
		switch {
		case gv.Headline == diagnose.Headline(diagnose.DecodeBound) || gv.Headline == diagnose.Headline(diagnose.KVBound):
			return fmt.Sprintf("at %v: %q calls a stage slow (%q)", at, gv.Headline, gv.Notes)
		case !strings.Contains(gv.Headline, "fail"):
			return fmt.Sprintf("at %v: headline %q does not name the failures", at, gv.Headline)
		case !strings.Contains(notes, "recomputed on decode after failed KV loads (network"):
			return fmt.Sprintf("at %v: notes %q do not name the failed loads", at, gv.Notes)
		}
		return ""
	})
	t.Logf("headlines: %v", headlines)

	// The ledger's shares over the run's second half against the counts
	// the simulator kept as it failed the loads.
	truth := model.FailureTruth("vllm")
	if truth.Loads < 500 || truth.Failed == 0 {
		t.Fatalf("too few loads to compare: %+v", truth)
	}
	wantFailed := float64(truth.Failed) / float64(truth.Loads)
	wantRecomputed := float64(truth.RecomputedTokens) / float64(truth.DecodePromptTokens)
	var failed, recomputed float64
	n := 0
	for _, p := range pts[len(pts)/2:] {
		pp, ok := p.Pool(pool)
		if !ok || !pp.Failures.Network.Ratio.OK() || !pp.Failures.Recomputed.Ratio.OK() {
			t.Fatalf("at %v: no failure shares: %+v", p.Time, pp)
		}
		failed += pp.Failures.Network.Ratio.V
		recomputed += pp.Failures.Recomputed.Ratio.V
		n++
		if why := pp.Failures.Timeout.Ratio.Why; why == "" {
			t.Fatalf("at %v: a timeout share where NIXL counts none", p.Time)
		}
	}
	failed /= float64(n)
	recomputed /= float64(n)
	t.Logf("truth: %d of %d loads failed (%.3f), %.3f of decode's prompt tokens recomputed; ledger: %.3f and %.3f",
		truth.Failed, truth.Loads, wantFailed, wantRecomputed, failed, recomputed)
	if math.Abs(wantFailed-0.2) > 0.04 {
		t.Errorf("the simulator failed %.3f of the loads, configured 0.2", wantFailed)
	}
	// Windows of 5 s hold about 15 loads each: their mean share is the
	// run's within a few points.
	if math.Abs(failed-wantFailed) > 0.03 {
		t.Errorf("ledger's network failure share %.3f, truth %.3f", failed, wantFailed)
	}
	if math.Abs(recomputed-wantRecomputed) > 0.03 {
		t.Errorf("ledger's recomputed share %.3f, truth %.3f", recomputed, wantRecomputed)
	}
}

// Where TTFT goes, against the simulator's own timestamps. vLLM over NIXL:
// each phase the ledger reads from the engines' histograms (prefill's
// queue and prefill times, the connector's copy time, decode's step) has
// the mean of the true phase over the run's requests, and bootstrap, which
// vLLM does not time, is absent. SGLang: its per-stage latency gives
// bootstrap too, and its transfer stage runs from the forward's end.
func TestPhasesMatchSimulatorTruth(t *testing.T) {
	f := func(fl flavour) {
		t.Run(fl.name, func(t *testing.T) {
			g := group(fl, fl.engine, sim.StageNone, 1, false)
			pts, model, pool := poolRun(t, scenario("phases", g), 11, 120*time.Second)
			truth := model.PhaseTruth(fl.engine)
			if truth.Requests < 200 {
				t.Fatalf("too few requests: %+v", truth)
			}
			req, xfers := float64(truth.Requests), float64(truth.Transfers)
			want := map[string]float64{
				"queue":             truth.Queue / req,
				"prefill":           truth.Prefill / req,
				"kv transfer":       truth.Transfer / xfers,
				"first decode step": truth.FirstDecode / req,
			}
			sglang := fl.engine == "sglang"
			if sglang {
				want["bootstrap"] = truth.Bootstrap / req
				want["kv transfer"] = truth.Handoff / xfers
			}
			sums := map[string]float64{}
			n := 0
			for _, p := range pts[len(pts)/3:] {
				pp, ok := p.Pool(pool)
				if !ok {
					t.Fatalf("at %v: no pool %q", p.Time, pool)
				}
				ph := pp.Phases
				got := map[string]ledger.Num{"queue": ph.Queue, "prefill": ph.Prefill, "kv transfer": ph.Transfer, "first decode step": ph.FirstDecode}
				if sglang {
					got["bootstrap"] = ph.Bootstrap
				} else if ph.Bootstrap.OK() {
					t.Fatalf("at %v: a bootstrap phase vLLM does not time: %v", p.Time, ph.Bootstrap.V)
				}
				all := true
				for _, v := range got {
					all = all && v.OK()
				}
				if !all {
					continue // a window without a completed request of some phase
				}
				for k, v := range got {
					sums[k] += v.V
				}
				n++
			}
			if n < len(pts)/3 {
				t.Fatalf("only %d of %d points have every timed phase", n, len(pts)*2/3)
			}
			for k, w := range want {
				got := sums[k] / float64(n)
				t.Logf("%s: ledger %.4f s, truth %.4f s", k, got, w)
				// Windowed means of a few requests each average to the
				// run's mean within a few percent; a phase of milliseconds
				// is allowed 5 ms.
				if math.Abs(got-w) > math.Max(0.1*w, 0.005) {
					t.Errorf("%s: ledger's mean %.4f s, truth %.4f s", k, got, w)
				}
			}
		})
	}
	f(flavours[1]) // vllm-nixl
	f(flavours[2]) // sglang
}

// Lost notifications on vLLM over NIXL, 20% of the loads: since PR #55854
// the connector counts each within its failed transfers too (the
// simulator does). The verdict's failed share is the loads that failed,
// once, not twice; the notification share is shown but not added.
func TestVerdictCountsLostNotificationsOnce(t *testing.T) {
	f := flavours[1] // vllm-nixl
	g := group(f, "vllm", sim.StageNone, 1, false)
	g.Failures = sim.FailureSpec{Ratio: 0.2, Class: sim.FailNotification}
	sc := scenario("lost-notifications", g)
	judgedPoolRun(t, sc, 7, 120*time.Second, 60*time.Second, 10*time.Second, func(at time.Duration, gv diagnose.GroupVerdict) string {
		// "…, while 21% of KV loads fail …" or "KV transfers failing: 21%
		// of those attempted …": the first share named must be the failed
		// loads', about 20%, not 40%.
		var share float64
		if _, err := fmt.Sscanf(firstShare(gv.Headline), "%g%%", &share); err != nil {
			return fmt.Sprintf("at %v: headline %q names no failed share", at, gv.Headline)
		}
		var wrong []string
		if share < 12 || share > 28 {
			wrong = append(wrong, fmt.Sprintf("at %v: headline %q: %g%% failed, the truth is 20%%", at, gv.Headline, share))
		}
		if !strings.Contains(strings.Join(gv.Notes, " | "), "lost notifications") {
			wrong = append(wrong, fmt.Sprintf("at %v: notes %q do not name the lost notifications", at, gv.Notes))
		}
		return strings.Join(wrong, "\n")
	})
}

// firstShare is s from its first number on ("" without one).
func firstShare(s string) string {
	if i := strings.IndexAny(s, "0123456789"); i >= 0 {
		return s[i:]
	}
	return ""
}
