package gen

import (
	"fmt"

	"github.com/ptdmon/ptdmon/internal/engine"
)

// Load shed before the engine queue (docs/design.md#load-shed-before-the-engine),
// and requests a router sent again to another worker
// (docs/design.md#requests-sent-again): per model, the requests per second
// and their share of served on decode plus themselves (the offered load for
// shed requests, the requests sent to workers for migrated ones).
const (
	modelShed          = "model:ptd_requests_shed:rate" + failureWindow
	modelShedRatio     = "model:ptd_requests_shed:ratio_rate" + failureWindow
	modelMigrated      = "model:ptd_requests_migrated:rate" + failureWindow
	modelMigratedRatio = "model:ptd_requests_migrated:ratio_rate" + failureWindow
	// offeredThreshold: the share shed or migrated that raises PTDLoadShed
	// or PTDRequestsMigrated, the verdict's failureHeadlineMin.
	offeredThreshold = "0.05"
)

// offeredShare is one kind of request counted beside the served ones: its
// per-target counter on the ptdmon path, the metric the engines path
// reads, its recorded rate and share, and its alert.
type offeredShare struct {
	counter       string
	metric        engine.Metric
	rate, ratio   string
	alert         string
	summary, desc string
}

var (
	shedShare = offeredShare{
		counter: "ptd_requests_shed_total", metric: engine.Shed, rate: modelShed, ratio: modelShedRatio,
		alert:   "PTDLoadShed",
		summary: "Over 5% of the load offered to {{ $labels.model }} is shed before the engine ({{ $labels.path }} path)",
		desc:    "Routers or engines turn requests away for capacity (flow control, overload shedding, admission caps): arrivals are the requests served plus these, and the stage rates show only the first. Read the verdict for the stage at its limit and add capacity there, or raise the caps if the queues have room.",
	}
	migratedShare = offeredShare{
		counter: "ptd_requests_migrated_total", metric: engine.Migrated, rate: modelMigrated, ratio: modelMigratedRatio,
		alert:   "PTDRequestsMigrated",
		summary: "Over 5% of the requests sent to {{ $labels.model }}'s workers are sent again after a worker was lost ({{ $labels.path }} path)",
		desc:    "A router re-sends requests whose worker was lost or failed them (Dynamo's migrations, the SGLang gateway's retries): the engines redo their work, so the stage rates run above the requests served. Look for workers restarting or dropping streams.",
	}
)

// shedRules record the shed load and the migrated requests, and their
// shares, on both paths, and alert on the shares.
func shedRules(n Names) []Rule {
	return append(offeredRules(n, shedShare), offeredRules(n, migratedShare)...)
}

func offeredRules(n Names, k offeredShare) []Rule {
	rate := func(s string) string { return rangeFn("rate", s, failureWindow) }
	ratio := func(path, served string) Rule {
		// Both sides are by model alone: they match one to one. The share
		// is of served + the kind: of the offered load for shed requests,
		// of the requests sent to workers for migrated ones.
		part := sumBy("sum", "model", fmt.Sprintf(`%s{path="%s"}`, k.rate, path))
		return record(k.ratio, fmt.Sprintf("%[1]s / (%[1]s + %[2]s)", part, served), "path", path)
	}
	out := []Rule{
		record(k.rate, sumBy("sum", "model", rate(k.counter)), "path", pathPtdmon),
		ratio(pathPtdmon, sumBy("sum", "model", rate(`ptd_requests_completed_total{role="decode"}`))),
	}
	if parts := engineParts(rate, k.metric); len(parts) > 0 {
		out = append(out,
			record(k.rate, sumBy("sum", "model", toTargetLabels("sum", union(parts...))), "path", pathEngines),
			ratio(pathEngines, sumBy("sum", "model", fmt.Sprintf(`%s{path="%s",role="decode"}`, n.TargetCompleted[1], pathEngines))))
	}
	return append(out, alert(k.alert, fmt.Sprintf("%s > %s", k.ratio, offeredThreshold), "1m", "warning", k.summary, k.desc))
}

// engineParts are the engines path's expressions of every family read as
// metric m: plain, by label value, or by a second label (Dynamo's errors of
// error_type="overload" are shed).
func engineParts(rate func(string) string, m engine.Metric) []string {
	var parts []string
	for _, a := range ruleAdapters() {
		for _, f := range a.Families {
			if f.Deprecated || f.Skip != "" || f.KV != engine.KVAuto {
				continue
			}
			g, ok := familyOf(f, m)
			if ok {
				parts = append(parts, series(perTarget("sum"), a, []engine.Family{g}, "", rate))
			}
		}
	}
	return parts
}

// familyOf is f narrowed to the series it reads as m.
func familyOf(f engine.Family, m engine.Metric) (engine.Family, bool) {
	switch {
	case f.AlsoLabel != "":
		if g, ok := byValueFamily(f, m); ok {
			return g, true
		}
		g := f
		g.ByLabel, g.ByValue, g.AlsoLabel, g.AlsoValue = f.AlsoLabel, f.AlsoValue, "", nil
		return byValueFamily(g, m)
	case f.ByLabel != "":
		return byValueFamily(f, m)
	}
	return f, f.Metric == m
}

// ruleAdapters are the adapters the generated rules and scrape configs
// read: every one but the mirrors of another (vLLM under Ray), whose
// deployments are read on the ptdmon path.
func ruleAdapters() []engine.Adapter {
	var out []engine.Adapter
	for _, a := range engine.Adapters() {
		if a.Mirror == "" {
			out = append(out, a)
		}
	}
	return out
}
