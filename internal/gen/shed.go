package gen

import (
	"fmt"

	"github.com/ptdmon/ptdmon/internal/engine"
)

// Load shed before the engine queue (docs/design.md#load-shed-before-the-engine):
// per model, the requests routers and engines turned away for capacity,
// and their share of the offered load, served on decode plus shed.
const (
	modelShed      = "model:ptd_requests_shed:rate" + failureWindow
	modelShedRatio = "model:ptd_requests_shed:ratio_rate" + failureWindow
	// shedThreshold: the share of offered load shed that raises PTDLoadShed,
	// the verdict's failureHeadlineMin.
	shedThreshold = "0.05"
)

// shedRules record the shed load and its share on both paths, and alert
// on the share.
func shedRules(n Names) []Rule {
	rate := func(s string) string { return rangeFn("rate", s, failureWindow) }
	ratio := func(path, served string) Rule {
		shed := fmt.Sprintf(`%s{path="%s"}`, modelShed, path)
		// Both sides are by model alone: they match one to one.
		return record(modelShedRatio, fmt.Sprintf("%[1]s / (%[1]s + %[2]s)", sumBy("sum", "model", shed), served), "path", path)
	}
	out := []Rule{
		record(modelShed, sumBy("sum", "model", rate("ptd_requests_shed_total")), "path", pathPtdmon),
		ratio(pathPtdmon, sumBy("sum", "model", rate(`ptd_requests_completed_total{role="decode"}`))),
	}
	if parts := engineShedParts(rate); len(parts) > 0 {
		out = append(out,
			record(modelShed, sumBy("sum", "model", toTargetLabels("sum", union(parts...))), "path", pathEngines),
			ratio(pathEngines, sumBy("sum", "model", fmt.Sprintf(`%s{path="%s",role="decode"}`, n.TargetCompleted[1], pathEngines))))
	}
	return append(out, alert("PTDLoadShed", fmt.Sprintf("%s > %s", modelShedRatio, shedThreshold),
		"1m", "warning",
		"Over 5% of the load offered to {{ $labels.model }} is shed before the engine ({{ $labels.path }} path)",
		"Routers or engines turn requests away for capacity (flow control, overload shedding, admission caps): arrivals are the requests served plus these, and the stage rates show only the first. Read the verdict for the stage at its limit and add capacity there, or raise the caps if the queues have room."))
}

// engineShedParts are the engines path's expressions of every family read
// as engine.Shed: plain, by label value, or by a second label (Dynamo's
// errors of error_type="overload").
func engineShedParts(rate func(string) string) []string {
	var parts []string
	for _, a := range ruleAdapters() {
		for _, f := range a.Families {
			if f.Deprecated || f.Skip != "" || f.KV != engine.KVAuto {
				continue
			}
			g, ok := shedFamily(f)
			if ok {
				parts = append(parts, series(perTarget("sum"), a, []engine.Family{g}, "", rate))
			}
		}
	}
	return parts
}

// shedFamily is f narrowed to the series it reads as engine.Shed.
func shedFamily(f engine.Family) (engine.Family, bool) {
	switch {
	case f.AlsoLabel != "":
		g := f
		g.ByLabel, g.ByValue, g.AlsoLabel, g.AlsoValue = f.AlsoLabel, f.AlsoValue, "", nil
		return byValueFamily(g, engine.Shed)
	case f.ByLabel != "":
		return byValueFamily(f, engine.Shed)
	}
	return f, f.Metric == engine.Shed
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
