package gen

import (
	"fmt"
	"strings"
)

// The label sets of recorded series. Both paths record the same labels so
// that one dashboard reads either.
const (
	targetBy = "target, role, engine, model, pool"
	// Labels attached to engine targets by the generated scrape config.
	engineBy = "ptd_target, ptd_role, ptd_engine, model_name, ptd_pool"
	// A stage is summed within a pool (docs/pools.md): one model's KV
	// bytes are never divided by another's B_request, and the alerts
	// compare a pool's stages with each other only.
	stageBy = "path, pool, model"
)

// Path label values.
const (
	pathPtdmon  = "ptdmon"
	pathEngines = "engines"
)

// onlyPtd keeps engine series that came through the generated scrape
// config (or file_sd with ptdmon's labels), so engines scraped by other
// jobs without a role are not summed into a stage.
const onlyPtd = `ptd_role!=""`

// The engines path reads every raw engine series once per evaluation
// (docs/fleet.md, "rule cost"): Prometheus pays for each series a selector
// reads, and more for the five-minute lookback of a bare selector than for
// a window of one or two scrapes.
const (
	// scrapeInterval is the generated engines job's scrape interval and the
	// rule groups' evaluation interval; its timeout is below it.
	scrapeInterval = "1s"
	// gaugeWindow finds a gauge's newest sample: two scrapes, so a scrape
	// still in flight at the evaluation leaves the one before it.
	gaugeWindow = "2s"
)

// lastScrape reads each counter series' newest sample among the scrapes
// of the two intervals that ended one interval ago. Samples carry their
// scrape's start time, rule evaluations a fixed grid of the same period,
// so every evaluation sees the next scrape of every target (read at the
// evaluation's own time, a scrape still in flight would be seen a step
// late, and its instant rate read as 0 and then twice). The delay (one
// interval) exceeds the scrape timeout, so the sample is committed; the
// second interval covers scrape-time jitter (VictoriaMetrics stamps the
// actual time) and a failed scrape, whose step then shows in the next one.
func lastScrape(selector string) string {
	return fmt.Sprintf("last_over_time(%s[%s] offset %s)", selector, gaugeWindow, scrapeInterval)
}

// lastGauge reads a gauge's newest sample.
func lastGauge(selector string) string {
	return fmt.Sprintf("last_over_time(%s[%s])", selector, gaugeWindow)
}

// sel writes a selector with matchers.
func sel(name string, matchers ...string) string {
	if len(matchers) == 0 {
		return name
	}
	return name + "{" + strings.Join(matchers, ", ") + "}"
}

// rangeFn applies a range function (rate, irate) over window w.
func rangeFn(fn, selector, w string) string {
	return fmt.Sprintf("%s(%s[%s])", fn, selector, w)
}

// sumBy aggregates an expression.
func sumBy(agg, by, expr string) string {
	return fmt.Sprintf("%s by (%s) (%s)", agg, by, expr)
}

// toTargetLabels renames the scrape config's ptd_* labels (and the engines'
// model_name) to the labels ptdmon exports, then keeps only those. The
// engines' own "engine" label (vLLM's data-parallel index) was summed away
// before, so it cannot clash.
func toTargetLabels(agg, expr string, keep ...string) string {
	e := expr
	for _, r := range [][2]string{{"target", "ptd_target"}, {"role", "ptd_role"}, {"engine", "ptd_engine"}, {"model", "model_name"}} {
		e = fmt.Sprintf(`label_replace(%s, "%s", "$1", "%s", "(.*)")`, e, r[0], r[1])
	}
	e = poolLabel(e, "engine", "model", labelPool)
	return sumBy(agg, strings.Join(append([]string{targetBy}, keep...), ", "), e)
}

// collapseRanks collapses an engine's replicated tensor/pipeline-parallel
// ranks (SGLang's tp_rank, pp_rank): every rank of a data-parallel group
// reports the same requests, so they are not added (the group labels,
// dp_rank and pid, stay and are added).
func collapseRanks(ranks []string, expr string) string {
	return "max without (" + strings.Join(ranks, ", ") + ") (" + expr + ")"
}

// union joins per-engine expressions that already carry distinct label
// sets. Each side is tagged first so that two sources of the same target
// (which have equal label sets once the metric name is dropped) are both
// kept by "or" and then added by the caller's sum.
func union(parts ...string) string {
	if len(parts) == 1 {
		return parts[0]
	}
	tagged := make([]string, len(parts))
	for i, p := range parts {
		tagged[i] = fmt.Sprintf(`label_replace(%s, "ptd_part", "%d", "", "")`, p, i)
	}
	return strings.Join(tagged, " or ")
}

// fallback prefers the first expression and uses the next only for targets
// the first has nothing for: engines export deprecated names only when the
// current name is absent, or both for a while, and must not be added.
// Matching on the target alone keeps that true where the families' other
// labels differ.
func fallback(parts ...string) string {
	return strings.Join(parts, " or on (ptd_target) ")
}

// poolLabel sets the pool label as ptdmon names pools (docs/pools.md): the
// target's pool label (the scrape configuration's ptd_pool; ptdmon's own
// series name the model only), else the model, else the engine kind. from
// lists the labels holding them, the weakest first: each one set
// overrides those before it.
func poolLabel(expr string, from ...string) string {
	e := expr
	for _, from := range from {
		e = fmt.Sprintf(`label_replace(%s, "pool", "$1", "%s", "(.+)")`, e, from)
	}
	return e
}

// ptdmonSum aggregates ptdmon's own per-instance series to the target
// level, pool included: ptdmon's ptd_target_pool names each target's pool
// (a labelled one too), and where it is missing (an older ptdmon) the pool
// is the model, else the engine kind.
func ptdmonSum(agg, by, expr string) string {
	e := poolLabel(expr, "engine", "model")
	joined := fmt.Sprintf("%s * on (target) group_left (pool) max by (target, pool) (ptd_target_pool)", e)
	return fmt.Sprintf("%s or on (target) %s", sumBy(agg, by, joined), sumBy(agg, by, e))
}
