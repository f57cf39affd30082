package e2e

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/config"
	"github.com/ptdmon/ptdmon/internal/gen"
	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/sim"
)

// Tolerances of the engines path's recorded utilisation (absolute): each
// recorded stage sample held to ptdmon's point nearest in time (the same
// quantity over the same W, from the same engines' scrapes, which the two
// take at different instants); prefill, and each target's busy fraction,
// to the simulator's true busy fraction over the same windows. A window
// of 4 s holds two or three prefill batches, so where a batch ends
// against a window's edge moves one window's busy time by a share of a
// batch; the vLLM prefill_time basis, which counts each request's prefill
// as its step's, also reads high by its batches' spread
// (docs/advisor.md#busy-time): its targets are held to a wider bound.
// The two paths' windows end at different instants, so their prefill
// means over twelve evaluations differ by up to a batch's share (−0.031
// and +0.046 in two runs of the same build on a loaded machine): the
// paths are held to each other as each is to the truth.
const (
	utilTolPtdmon       = 0.06
	utilTolTruth        = 0.06
	utilTolTarget       = 0.05
	utilTolTargetApprox = 0.08
	utilLag             = 500 * time.Millisecond
)

// withBatchLimits gives each decode target of cfg the simulator's batch
// limit as max_num_seqs (its ptd_max_num_seqs label), which decode's
// utilisation needs on both paths.
func withBatchLimits(cfg *config.Config, cl *sim.Cluster) {
	for i, t := range cfg.Targets {
		if t.Role != "decode" {
			continue
		}
		if n := cl.MaxNumSeqs(t.Name); n > 0 {
			labels := map[string]string{ledger.LabelMaxNumSeqs: strconv.Itoa(n)}
			for k, v := range t.Labels {
				labels[k] = v
			}
			cfg.Targets[i].Labels = labels
		}
	}
}

// The utilisation run: the simulator at wall-clock speed (its busy and
// idle seconds are simulated seconds, which a faster run would put above
// one per wall second) and a short window, so that 24 s of complete
// windows, twelve evaluations of the utilisation group (every 2 s), fit in
// 32 s.
const (
	utilWindow = 4 * time.Second
	utilRunFor = 32 * time.Second
	utilSpan   = 24 * time.Second
)

// TestPrometheusUtilisation: the simulated balanced cluster at speed 1
// (vLLM FlagCX and SGLang), ptdmon serve in-process and the real
// Prometheus with the generated scrape config and rules. Over the last
// 24 s of a 32 s run, the engines path's recorded stage utilisation,
// weighed into the deployment's (prefill by its instances, decode by
// their batch limits), agrees with ptdmon's own points (prefill's busy
// instances over its instances up, decode's mean batch over its limit)
// within ±0.04 on average, each pool's prefill with the simulator's true
// busy fraction of its instances within ±0.06, and each target's busy
// fraction with its own within ±0.05 (an SGLang idle counter read a fifth
// short, +0.057, fails it).
func TestPrometheusUtilisation(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the 20 s Prometheus run")
	}
	t.Parallel()
	promBin := prometheusBin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sc, err := sim.LoadScenario("balanced")
	if err != nil {
		t.Fatal(err)
	}
	cl := startSim(t, ctx, sc, 5, 1)
	cfg := simConfig(cl)
	cfg.Window = config.Duration{Duration: utilWindow}
	withBatchLimits(cfg, cl)
	ptdURL := runPtdmon(t, ctx, cfg, cl.BytesPerRequest())

	in := gen.FromConfig(cfg, cl.BytesPerRequest())
	in.PtdmonAddr = strings.TrimPrefix(ptdURL, "http://")
	in.RuleFiles = []string{"rules.yml"}
	dir := t.TempDir()
	rules, err := gen.Rules(in).YAML()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "rules.yml"), rules, 0o644); err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	promURL := startPrometheus(t, ctx, promBin, dir, writePromYML(t, dir, in))
	time.Sleep(time.Until(started.Add(utilRunFor - utilSpan - utilWindow)))
	var points []utilPoint
	for time.Since(started) < utilRunFor {
		if p, ok := ptdmonUtilisation(t, ptdURL+"/api/v1/snapshot"); ok {
			points = append(points, p)
		}
		time.Sleep(250 * time.Millisecond)
	}
	end := time.Now()
	checkUtilisation(t, promURL, cl, end, points)
	checkRulesHealthy(t, promURL)
	logGroupTimes(t, promURL)
}

// checkUtilisation compares the engines path's recorded utilisation with
// ptdmon's points and the truth (TestPrometheusUtilisation).
func checkUtilisation(t *testing.T, promURL string, cl *sim.Cluster, end time.Time, points []utilPoint) {
	t.Helper()
	n := gen.RecordNames(strconvDuration(utilWindow))
	// Each target's pool, from its recorded busy fraction.
	poolOf := map[string]string{}
	for _, r := range instantQuery(t, promURL, fmt.Sprintf(`%s{path="engines"}`, n.TargetBusy), end) {
		poolOf[r.Metric["target"]] = r.Metric["pool"]
	}
	checkTargetBusy(t, promURL, cl, n.TargetBusy, end)
	if len(points) < int(utilSpan/time.Second) {
		t.Fatalf("only %d ptdmon points with both stages' utilisation", len(points))
	}
	for si, stage := range []string{"prefill", "decode"} {
		weight := map[string]float64{}
		for _, in := range cl.TruthAt(end).Instances {
			if in.Role != stage {
				continue
			}
			if stage == "prefill" {
				weight[poolOf[in.Name]]++
			} else {
				weight[poolOf[in.Name]] += float64(cl.MaxNumSeqs(in.Name))
			}
		}
		series := instantQuery(t, promURL, fmt.Sprintf(`%s{path="engines",stage=%q}[%dms]`, n.StageUtilisation, stage, utilSpan.Milliseconds()), end)
		if len(series) != len(weight) {
			t.Errorf("%s: %d pools' utilisation recorded, want %d (%v)", stage, len(series), len(weight), weight)
			continue
		}
		// The deployment's at each evaluation, the pools weighed.
		type acc struct{ sum, of float64 }
		at := map[time.Time]*acc{}
		for _, r := range series {
			pool := r.Metric["pool"]
			var v float64
			for _, pair := range r.Values {
				s := promSample(t, "utilisation", pair)
				if at[s.t] == nil {
					at[s.t] = &acc{}
				}
				at[s.t].sum += s.v * weight[pool]
				at[s.t].of += weight[pool]
				v += s.v
			}
			if stage != "prefill" || len(r.Values) == 0 {
				continue
			}
			v /= float64(len(r.Values))
			truth := trueBusy(cl, end, pool, poolOf)
			t.Logf("pool %-33s %-7s recorded %.3f  truth %.3f (%+.3f)", pool, stage, v, truth, v-truth)
			if !(math.Abs(v-truth) <= utilTolTruth) {
				t.Errorf("pool %s %s: recorded utilisation %.3f, true busy fraction %.3f: beyond ±%.2f", pool, stage, v, truth, utilTolTruth)
			}
		}
		var rec, ptd float64
		k := 0
		for ts, a := range at {
			if a.of == 0 {
				continue
			}
			p := nearestPoint(points, ts)
			rec += a.sum / a.of
			ptd += p.u[si]
			k++
		}
		if k < 2 {
			t.Errorf("%s: %d recorded samples in the last %s, want 2 or more", stage, k, utilSpan)
			continue
		}
		rec, ptd = rec/float64(k), ptd/float64(k)
		t.Logf("deployment %-7s recorded %.3f  ptdmon's points %.3f (%+.3f, %d samples)", stage, rec, ptd, rec-ptd, k)
		if !(math.Abs(rec-ptd) <= utilTolPtdmon) {
			t.Errorf("%s: engines path's utilisation %.3f, ptdmon's %.3f: beyond ±%.2f", stage, rec, ptd, utilTolPtdmon)
		}
		if exp := instantQuery(t, promURL, fmt.Sprintf(`ptd_stage_utilisation{stage=%q}`, stage), end); len(exp) == 1 {
			t.Logf("deployment %-7s ptd_stage_utilisation %.6s (%s, over ptdmon's horizon)", stage, exp[0].Value[1], exp[0].Metric["basis"])
		}
	}
}

// checkTargetBusy holds each target's recorded busy fraction, averaged over
// the last utilSpan, to the simulator's true busy fraction of that
// instance over the same windows (each ending utilLag before its sample:
// a sample rests on the scrapes of the second before it).
func checkTargetBusy(t *testing.T, promURL string, cl *sim.Cluster, name string, end time.Time) {
	t.Helper()
	res := instantQuery(t, promURL, fmt.Sprintf(`%s{path="engines"}[%dms]`, name, utilSpan.Milliseconds()), end)
	if len(res) != len(cl.TruthAt(end).Instances) {
		t.Errorf("%d targets' busy fraction recorded, want %d", len(res), len(cl.TruthAt(end).Instances))
	}
	for _, r := range res {
		target := r.Metric["target"]
		var rec, truth float64
		for _, pair := range r.Values {
			s := promSample(t, name, pair)
			rec += s.v
			truth += instanceBusy(cl, target, s.t.Add(-utilLag-utilWindow), s.t.Add(-utilLag))
		}
		k := float64(len(r.Values))
		rec, truth = rec/k, truth/k
		t.Logf("target %-10s %-7s busy %.3f  truth %.3f (%+.3f, %s)", target, r.Metric["role"], rec, truth, rec-truth, r.Metric["basis"])
		tol := utilTolTarget
		if r.Metric["basis"] == ledger.BasisPrefillTime {
			tol = utilTolTargetApprox
		}
		if !(math.Abs(rec-truth) <= tol) {
			t.Errorf("target %s: recorded busy fraction %.3f (%s), true %.3f: beyond ±%.2f", target, rec, r.Metric["basis"], truth, tol)
		}
	}
}

// instanceBusy is the named instance's true busy fraction over [from, to].
func instanceBusy(cl *sim.Cluster, name string, from, to time.Time) float64 {
	a, b := cl.TruthAt(from), cl.TruthAt(to)
	in := b.Instance(name)
	sec := b.SimSeconds - a.SimSeconds
	if sec <= 0 || in.Engines == 0 {
		return math.NaN()
	}
	return (in.BusySeconds - a.Instance(name).BusySeconds) / sec / float64(in.Engines)
}

// utilPoint is one ptdmon point's utilisation: prefill's busy instances
// over its instances up, decode's mean batch over its limit.
type utilPoint struct {
	t time.Time
	u [2]float64
}

// ptdmonUtilisation reads the newest point's utilisation; ok is false
// while either is absent.
func ptdmonUtilisation(t *testing.T, u string) (utilPoint, bool) {
	t.Helper()
	var s struct {
		Point *struct {
			Time    time.Time `json:"time"`
			Prefill struct {
				Busy *float64 `json:"busy_instances"`
				Up   int      `json:"instances_up"`
			} `json:"prefill"`
			Decode struct {
				Batch *struct {
					Running *float64 `json:"running_mean"`
					Limit   *float64 `json:"limit"`
				} `json:"batch"`
			} `json:"decode"`
		} `json:"point"`
	}
	getJSON(t, u, &s)
	p := s.Point
	if p == nil || p.Prefill.Busy == nil || p.Prefill.Up == 0 || p.Decode.Batch == nil ||
		p.Decode.Batch.Running == nil || p.Decode.Batch.Limit == nil || *p.Decode.Batch.Limit <= 0 {
		return utilPoint{}, false
	}
	return utilPoint{p.Time, [2]float64{*p.Prefill.Busy / float64(p.Prefill.Up), *p.Decode.Batch.Running / *p.Decode.Batch.Limit}}, true
}

// nearestPoint is the point whose time is nearest to t.
func nearestPoint(points []utilPoint, t time.Time) utilPoint {
	best := points[0]
	for _, p := range points[1:] {
		if d := p.t.Sub(t).Abs(); d < best.t.Sub(t).Abs() {
			best = p
		}
	}
	return best
}

// trueBusy is the mean true busy fraction of pool's prefill instances over
// the span the recorded average rests on: utilSpan of windows W.
func trueBusy(cl *sim.Cluster, end time.Time, pool string, poolOf map[string]string) float64 {
	a, b := cl.TruthAt(end.Add(-utilSpan-utilWindow)), cl.TruthAt(end)
	sec := b.SimSeconds - a.SimSeconds
	var sum float64
	k := 0
	for _, in := range b.Instances {
		if in.Role != "prefill" || poolOf[in.Name] != pool || in.Engines == 0 {
			continue
		}
		sum += (in.BusySeconds - a.Instance(in.Name).BusySeconds) / sec / float64(in.Engines)
		k++
	}
	if k == 0 {
		return math.NaN()
	}
	return sum / float64(k)
}

// logGroupTimes logs each rule group's last evaluation time, the
// utilisation group's beside the others'.
func logGroupTimes(t *testing.T, promURL string) {
	t.Helper()
	var body struct {
		Data struct {
			Groups []struct {
				Name           string  `json:"name"`
				EvaluationTime float64 `json:"evaluationTime"`
			} `json:"groups"`
		} `json:"data"`
	}
	getJSON(t, promURL+"/api/v1/rules", &body)
	for _, g := range body.Data.Groups {
		t.Logf("rule group %-24s last evaluation %.2f ms", g.Name, 1e3*g.EvaluationTime)
	}
}
