package gen

import (
	"fmt"
	"sort"
	"strconv"

	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/ledger"
)

// Busy bases the engines path computes, named as ptdmon's ledger names
// them (docs/advisor.md#busy-time), strongest first. The others are not
// PromQL's to compute: TensorRT-LLM's busy seconds come from its JSON
// iteration statistics, which Prometheus does not scrape.
var ruleBusyBases = []string{ledger.BasisIdleCounter, ledger.BasisOccupancy, ledger.BasisPrefillTime, ledger.BasisStepTime, ledger.BasisSampled}

// The stage utilisation's basis values, those of ptd_stage_utilisation.
const (
	utilisationBusy  = "busy"
	utilisationBatch = "batch"
)

// targetLimit is one decode target's batch limit from ptdmon.yaml.
type targetLimit struct {
	target string
	n      int
}

// decodeLimits are the decode targets' batch limits: the ptd_max_num_seqs
// label config.ResolveTarget writes from max_num_seqs (the target's own,
// its pool's or the deployment's). PromQL cannot read a label's value as a
// number, so each becomes a constant series; file_sd targets have none.
func decodeLimits(targets []engine.Target) []targetLimit {
	var out []targetLimit
	for _, t := range targets {
		if t.Role != engine.Decode {
			continue
		}
		if n, err := strconv.Atoi(t.Labels[ledger.LabelMaxNumSeqs]); err == nil && n > 0 {
			out = append(out, targetLimit{t.Name, n})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].target < out[j].target })
	return out
}

// utilisationRules record, on the engines path, each target's busy
// fraction over W and its basis, decode's mean running batch over W and
// batch limit, and each pool's stage utilisation: prefill's busy
// instances over its instances, decode's batch over its limit. They are
// the ledger's per-point quantities; ptdmon's ptd_stage_utilisation
// averages them over a minute (avg_over_time of the stage series).
//
// They run every utilisationInterval: a recorded sample is the same
// window as ptdmon's point of that second. Their range reads cost about
// what the stage rates' group does (docs/prometheus.md#utilisation).
func utilisationRules(n Names, w string, limits []targetLimit) []Rule {
	p := []string{"path", pathEngines}
	var out []Rule
	if e := busyExpr(w); e != "" {
		out = append(out, record(n.TargetBusy, e, p...))
	}
	out = append(out, record(n.TargetRunningAvg,
		fmt.Sprintf(`avg_over_time(%s[%s])`, sel(n.TargetRunning, `path="engines"`, `role="decode"`), w)))
	for _, l := range limits {
		out = append(out, record(n.TargetBatchLimit, "vector("+strconv.Itoa(l.n)+")", "path", pathEngines, "target", l.target))
	}
	// The stage's value only where every instance seen (its running gauge
	// recorded) has one: an instance without the signal is absent from
	// the sum, never 0.
	every := func(of, seen string) string {
		return fmt.Sprintf("count by (%s) (%s) >= count by (%s) (%s)", stageBy, of, stageBy, seen)
	}
	busy := sel(n.TargetBusy, `path="engines"`, `role="prefill"`)
	out = append(out, record(n.StageUtilisation,
		fmt.Sprintf("%s / (%s)", sumBy("sum", stageBy, busy), every(busy, sel(n.TargetRunning, `path="engines"`, `role="prefill"`))),
		"stage", "prefill", "basis", utilisationBusy))
	if len(limits) > 0 {
		running := sel(n.TargetRunningAvg, `path="engines"`)
		// The limit joined to the running batch's labels (pool, model).
		limit := fmt.Sprintf("(%s * 0 + on (path, target) group_left () %s)", running, n.TargetBatchLimit)
		out = append(out, record(n.StageUtilisation,
			fmt.Sprintf("%s / (%s and on (%s) (%s))", sumBy("sum", stageBy, running), sumBy("sum", stageBy, limit), stageBy, every(limit, running)),
			"stage", "decode", "basis", utilisationBatch))
	}
	return out
}

// busyExpr is each engine target's busy fraction over W, labelled with its
// basis: per target, the strongest basis its engine exports (or on the
// target: a weaker one only where the stronger is absent).
func busyExpr(w string) string {
	rate := func(s string) string { return rangeFn("rate", s, w) }
	var parts []string
	for _, basis := range ruleBusyBases {
		for _, a := range ruleAdapters() {
			e := adapterBusy(a, basis, rate, w)
			if e == "" {
				continue
			}
			parts = append(parts, fmt.Sprintf(`label_replace(%s, "basis", "%s", "", "")`, e, basis))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return toTargetLabels("sum", fallback(parts...), "basis")
}

// adapterBusy is adapter a's busy fraction per target by one basis, ""
// where a has no family for it.
func adapterBusy(a engine.Adapter, basis string, rate func(string) string, w string) string {
	switch basis {
	case ledger.BasisIdleCounter:
		// 1 − idle seconds per second, averaged over the schedulers (the
		// DP ranks once replicated ranks are collapsed); the idle stage
		// of the seconds by stage where the idle counter is absent.
		var parts []string
		for _, f := range families(a, engine.SchedulerIdle) {
			parts = append(parts, series(perTarget("avg"), a, []engine.Family{f}, "", rate))
		}
		for _, f := range a.Families {
			if g, ok := byFallbackFamily(f, engine.SchedulerIdle); ok {
				parts = append(parts, series(perTarget("avg"), a, []engine.Family{g}, "", rate))
			}
		}
		if len(parts) == 0 {
			return ""
		}
		return fmt.Sprintf("clamp(1 - (%s), 0, 1)", fallback(parts...))
	case ledger.BasisOccupancy:
		// The mean over W's samples, a sample the engine cleared (NaN)
		// counted as idle: the non-NaN samples' sum over every sample.
		fs := families(a, engine.ForwardOccupancy)
		if len(fs) == 0 {
			return ""
		}
		f := fs[0]
		sub := func(expr string) func(string) string {
			return func(s string) string { return fmt.Sprintf(expr, s, w, scrapeInterval) }
		}
		sum := series(perTarget("avg"), a, fs, "", sub("sum_over_time((%s >= 0)[%s:%s])"))
		cnt := series(perTarget("avg"), a, fs, "", sub("count_over_time(%s[%s:%s])"))
		scale := f.Scale
		if scale == 0 {
			scale = 1
		}
		return fmt.Sprintf("clamp(%s * %s / %s, 0, 1)", strconv.FormatFloat(scale, 'f', -1, 64), sum, cnt)
	case ledger.BasisPrefillTime:
		if a.Engine != engine.VLLM {
			return ""
		}
		// Requests' prefill seconds per second ÷ requests per step (at
		// least 1), where a prompt was done or no step ran at all.
		pt := roleFamily(a, engine.PrefillTime, engine.Prefill)
		steps := roleFamily(a, engine.IterationTokens, engine.Prefill)
		if pt == nil || steps == nil {
			return ""
		}
		sum := series(perTarget("sum"), a, pt, "_sum", rate)
		cnt := series(perTarget("sum"), a, pt, "_count", rate)
		st := series(perTarget("sum"), a, steps, "_count", rate)
		perStep := fmt.Sprintf("(clamp_min(%s / (%s > 0), 1) or %s * 0 + 1)", cnt, st, st)
		return fmt.Sprintf("clamp_max(%s / %s, 1) and (%s > 0 or %s == 0)", sum, perStep, cnt, st)
	case ledger.BasisStepTime:
		if a.Engine != engine.VLLM {
			return ""
		}
		// Steps per second × the mean inter-token latency (a step's).
		steps := roleFamily(a, engine.IterationTokens, engine.Decode)
		itl := roleFamily(a, engine.ITL, engine.Decode)
		if steps == nil || itl == nil {
			return ""
		}
		st := series(perTarget("sum"), a, steps, "_count", rate)
		var means []string
		for _, f := range itl {
			one := []engine.Family{f}
			means = append(means, fmt.Sprintf("%s / (%s > 0)",
				series(perTarget("sum"), a, one, "_sum", rate), series(perTarget("sum"), a, one, "_count", rate)))
		}
		return fmt.Sprintf("clamp_max(%s * (%s), 1) or %s == 0", st, fallback(means...), st)
	case ledger.BasisSampled:
		if a.Engine != engine.TensorRTLLM {
			return ""
		}
		// The share of W's samples with requests of the role's phase.
		sub := func(s string) string { return fmt.Sprintf("avg_over_time((%s > bool 0)[%s:%s])", s, w, scrapeInterval) }
		var parts []string
		for _, rm := range []struct {
			role engine.Role
			m    engine.Metric
		}{{engine.Prefill, engine.ContextRequests}, {engine.Decode, engine.GenerationRequests}} {
			if fs := roleFamily(a, rm.m, rm.role); fs != nil {
				parts = append(parts, series(perTarget("max"), a, fs, "", sub))
			}
		}
		if len(parts) == 0 {
			return ""
		}
		return union(parts...)
	}
	return ""
}

// families are adapter a's current families of metric m (the deprecated
// after them), read directly rather than by a label's value.
func families(a engine.Adapter, m engine.Metric) []engine.Family {
	var cur, dep []engine.Family
	for _, f := range a.Families {
		switch {
		case f.Metric != m || f.ByLabel != "" || f.KV != engine.KVAuto || f.Skip != "" || f.Note:
		case f.Deprecated:
			dep = append(dep, f)
		default:
			cur = append(cur, f)
		}
	}
	return append(cur, dep...)
}

// roleFamily is families(a, m) read on targets of role r only.
func roleFamily(a engine.Adapter, m engine.Metric, r engine.Role) []engine.Family {
	fs := families(a, m)
	for i := range fs {
		fs[i].Role = r
	}
	return fs
}

// byFallbackFamily is f narrowed to the label values it reads as m where
// the metric's own family is absent (engine.Family.ByFallback).
func byFallbackFamily(f engine.Family, m engine.Metric) (engine.Family, bool) {
	if f.ByLabel == "" || len(f.ByFallback) == 0 {
		return f, false
	}
	g := f
	g.ByValue, g.ByFallback = reasonsOf(f.ByFallback, m), nil
	return g, len(g.ByValue) > 0
}
