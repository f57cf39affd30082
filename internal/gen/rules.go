package gen

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/ptdmon/ptdmon/internal/engine"
)

// RuleFile is a Prometheus rule file (also the spec of a PrometheusRule).
type RuleFile struct {
	Groups []RuleGroup `yaml:"groups" json:"groups"`
}

// RuleGroup is one group of rules, evaluated in order.
type RuleGroup struct {
	Name     string `yaml:"name" json:"name"`
	Interval string `yaml:"interval,omitempty" json:"interval,omitempty"`
	Rules    []Rule `yaml:"rules" json:"rules"`
}

// Rule is a recording or an alerting rule.
type Rule struct {
	Record      string            `yaml:"record,omitempty" json:"record,omitempty"`
	Alert       string            `yaml:"alert,omitempty" json:"alert,omitempty"`
	Expr        string            `yaml:"expr" json:"expr"`
	For         string            `yaml:"for,omitempty" json:"for,omitempty"`
	Labels      map[string]string `yaml:"labels,omitempty" json:"labels,omitempty"`
	Annotations map[string]string `yaml:"annotations,omitempty" json:"annotations,omitempty"`
}

// Names are the recorded series. Instant rates are irate over W (only the
// last two samples count); windowed rates are rate over W. Labels: target
// level {path, target, role, engine, model}, stage level {path, stage, model}.
type Names struct {
	TargetCompleted [2]string // irate, rate<W>
	TargetKVBytes   [2]string
	PathKVBytes     [2]string
	Stage           [2]string
	KVRequestBytes  string
	TargetRunning   string
	TargetQueue     string
	TargetKVUsage   string
	// TargetEnginesAwake is an engine target's engines awake (vLLM's
	// sleep mode): 0 is an instance asleep on purpose, not down.
	TargetEnginesAwake string
	TargetKVFailures   string
	// The engines path's counters per engine process at their last scrape
	// (labels ptd_target, ptd_role, ptd_engine, model_name and the
	// engine's own, plus source for KV bytes), which its rates read.
	ProcessCompleted string
	ProcessKVBytes   string
	// Utilisation on the engines path (docs/prometheus.md#utilisation):
	// each target's busy fraction over W (label basis: the ledger's busy
	// basis), decode's mean running batch over W and its batch limit from
	// ptdmon.yaml (labels path and target only), and each pool's stage
	// utilisation (labels stage and basis, busy or batch, as
	// ptd_stage_utilisation's).
	TargetBusy       string
	TargetRunningAvg string
	TargetBatchLimit string
	StageUtilisation string
	// Ops are the operation suffixes of [0] and [1]: "irate" and "rate<W>",
	// also the values of the dashboards' window variable.
	Ops [2]string
}

// failureWindow is the range of the failure rate alerts read: long enough
// that one failed transfer stays visible for a minute.
const failureWindow = "1m"

// alertInterval is the evaluation interval of the alert group.
const alertInterval = "5s"

// utilisationInterval is the utilisation group's: at 200 vLLM engines an
// evaluation takes about 0.04 s, so every second it would take the
// engines path's rules past 0.12 s of evaluation a second
// (docs/prometheus.md#utilisation). Each sample is ptdmon's point of
// that second.
const utilisationInterval = "2s"

// RecordNames returns the recorded names for window w, following the
// level:metric:operations convention.
func RecordNames(w string) Names {
	ops := [2]string{"irate", "rate" + w}
	two := func(prefix string) [2]string { return [2]string{prefix + ops[0], prefix + ops[1]} }
	return Names{
		TargetCompleted:    two("target:ptd_requests_completed:"),
		TargetKVBytes:      two("target:ptd_kv_transfer_bytes:"),
		PathKVBytes:        two("path:ptd_kv_transfer_bytes:"),
		Stage:              two("stage:ptd_requests:"),
		KVRequestBytes:     "path:ptd_kv_request_bytes:max",
		TargetRunning:      "target:ptd_requests_running:sum",
		TargetQueue:        "target:ptd_queue_requests:sum",
		TargetKVUsage:      "target:ptd_kv_cache_usage_ratio:avg",
		TargetEnginesAwake: "target:ptd_engines_awake:sum",
		TargetKVFailures:   "target:ptd_kv_transfer_failures:rate" + failureWindow,
		ProcessCompleted:   "process:ptd_requests_completed_total:last",
		ProcessKVBytes:     "process:ptd_kv_transfer_bytes_total:last",
		TargetBusy:         "target:ptd_busy_ratio:avg" + w,
		TargetRunningAvg:   "target:ptd_requests_running:avg" + w,
		TargetBatchLimit:   "target:ptd_max_num_seqs:config",
		StageUtilisation:   "stage:ptd_utilisation:avg" + w,
		Ops:                ops,
	}
}

// Rules returns the recording and alerting rules for both paths.
//
// Prometheus evaluates the rules of a group one after the other at one
// timestamp, and different groups concurrently. Rules that read each
// other's output share a group (a stage rule reads the target rules of the
// same evaluation); what does not is split, so each group stays short and
// none waits for the others: request rates, KV rates, the engines' gauges,
// and the alerts, which wait 15 s to 2 min before firing and run every
// alertInterval with the one-minute failure rates only they read.
func Rules(in Input) RuleFile {
	in = in.withDefaults()
	w := promDuration(in.Window)
	n := RecordNames(w)
	requests := append(ptdmonTargetRules(n, w), engineTargetRules(n, w)...)
	requests = append(requests, stageRequestRules(n)...)
	kv := append(ptdmonKVRules(n, w), engineKVRules(n, w, in.KVSource)...)
	kv = append(kv, kvRequestRules(n, in.KVBytesPerRequest, in.PoolKVBytes)...)
	kv = append(kv, stageKVRules(n, kvMatch(in.PoolKVBytes))...)
	return RuleFile{Groups: []RuleGroup{
		{Name: "ptdmon-stage-rates", Interval: scrapeInterval, Rules: requests},
		{Name: "ptdmon-kv-rates", Interval: scrapeInterval, Rules: kv},
		{Name: "ptdmon-engine-gauges", Interval: scrapeInterval, Rules: engineGaugeRules(n)},
		{Name: "ptdmon-alerts", Interval: alertInterval, Rules: append(failureRules(n), alertRules(n, kvMatch(in.PoolKVBytes))...)},
		{Name: "ptdmon-failure-classes", Interval: alertInterval, Rules: append(engineFailureClassRules(), failureClassRules()...)},
		{Name: "ptdmon-load-shed", Interval: alertInterval, Rules: append(shedRules(n), waitingReasonRules(n)...)},
		{Name: "ptdmon-utilisation", Interval: utilisationInterval, Rules: utilisationRules(n, w, decodeLimits(in.Targets))},
	}}
}

func record(name, expr string, labels ...string) Rule {
	r := Rule{Record: name, Expr: expr}
	if len(labels) > 0 {
		r.Labels = map[string]string{}
		for i := 0; i+1 < len(labels); i += 2 {
			r.Labels[labels[i]] = labels[i+1]
		}
	}
	return r
}

// ptdmonTargetRules read ptdmon's canonical series: one set per engine
// instance, already reset-adjusted and summed over the engine's own series.
func ptdmonTargetRules(n Names, w string) []Rule {
	p := []string{"path", pathPtdmon}
	var out []Rule
	for i, fn := range []string{"irate", "rate"} {
		out = append(out, record(n.TargetCompleted[i], ptdmonSum("sum", targetBy, rangeFn(fn, "ptd_requests_completed_total", w)), p...))
	}
	return append(out,
		record(n.TargetRunning, ptdmonSum("sum", targetBy, "ptd_requests_running"), p...),
		record(n.TargetQueue, ptdmonSum("sum", targetBy, "ptd_requests_waiting"), "path", pathPtdmon, "queue", "waiting"),
		record(n.TargetQueue, ptdmonSum("sum", targetBy+", queue", "ptd_queue_requests"), p...),
		record(n.TargetKVUsage, ptdmonSum("avg", targetBy, "ptd_kv_cache_usage_ratio"), p...),
	)
}

// ptdmonKVRules read ptdmon's KV byte counters.
func ptdmonKVRules(n Names, w string) []Rule {
	var out []Rule
	for i, fn := range []string{"irate", "rate"} {
		out = append(out, record(n.TargetKVBytes[i], ptdmonSum("sum", targetBy, rangeFn(fn, "ptd_kv_transfer_bytes_total", w)), "path", pathPtdmon))
	}
	return out
}

// engineTargetRules compute the same target-level series straight from the
// engines' own counters (engineKVRules and engineGaugeRules the rest),
// reading the engine adapters' tables (internal/engine): the families,
// their deprecated names, finish reasons that are not completions, rank
// and split labels are the ones ptdmon's own reader applies
// (docs/adapters.md).
//
// Each raw series is read once per evaluation (docs/fleet.md): the
// counters' last scrape is recorded per engine process first (finish
// reasons added, every other label kept, so a process that restarts resets
// only its own series), and the rates are taken of those. One rule per
// adapter and part, told apart by a rule label rather than a union, so no
// function rewrites every process's labels.
func engineTargetRules(n Names, w string) []Rule {
	var out []Rule
	for _, a := range ruleAdapters() {
		for i, e := range metricExprs(a, engine.Completed, perProcess, lastScrape) {
			part := string(a.Engine)
			if i > 0 {
				part += "-" + strconv.Itoa(i)
			}
			out = append(out, record(n.ProcessCompleted, e, "ptd_part", part))
		}
	}
	return append(out, processRates(n.ProcessCompleted, n.TargetCompleted, w)...)
}

// engineKVRules record each KV connector's byte counters per engine
// process, labelled with the connector (source), and their rates.
func engineKVRules(n Names, w, kvSource string) []Rule {
	var out []Rule
	for _, c := range engine.Connectors() {
		if kvSource != "" && kvSource != "auto" && kvSource != string(c.Source) {
			continue
		}
		a, _ := engine.Lookup(c.Engine)
		f, ok := a.Family(engine.KVBytes, c.Source)
		if !ok {
			continue
		}
		suffix := ""
		if f.Sizes {
			suffix = "_sum" // a size histogram's _sum counts bytes
		}
		// A library counts sent and received bytes apart (NIXL's tx and rx):
		// every byte family of the connector adds up.
		fams := []engine.Family{f}
		for _, g := range a.Families {
			if g.KV == c.Source && g.Metric == engine.KVBytes && g.Name != f.Name && g.ByLabel == "" &&
				g.Skip == "" && !g.Deprecated && g.Sizes == f.Sizes && g.Scale == f.Scale {
				fams = append(fams, g)
			}
		}
		e := series(perProcess, a, fams, suffix, lastScrape)
		if f.Scale != 0 && f.Scale != 1 {
			e = strconv.FormatFloat(f.Scale, 'f', -1, 64) + " * " + e
		}
		out = append(out, record(n.ProcessKVBytes, e, "source", string(c.Source)))
	}
	if len(out) == 0 {
		return nil
	}
	return append(out, processRates(n.ProcessKVBytes, n.TargetKVBytes, w, "source")...)
}

// processRates are the target-level rates of per-process counters, added
// per target: the instant rate is each process's last step; the windowed
// one its increase over W divided by W, since the recorded samples lie on
// the evaluation grid (Prometheus 2's range includes the sample W before,
// so nothing is extrapolated). Both read the process series directly: a
// chain of recordings is as long as the slowest rule engine needs it to be
// (vmalert sees each recording it wrote back a step late).
func processRates(process string, target [2]string, w string, keep ...string) []Rule {
	p := []string{"path", pathEngines}
	by := strings.Join(append([]string{engineBy}, keep...), ", ")
	var out []Rule
	for i, fn := range []string{"irate", "rate"} {
		out = append(out, record(target[i], toTargetLabels("sum", sumBy("sum", by, rangeFn(fn, process, w)), keep...), p...))
	}
	return out
}

// engineGaugeRules record the engines' gauges per target: running, the
// queues and KV cache usage. They have a group of their own, evaluated
// beside the rates rather than after them.
func engineGaugeRules(n Names) []Rule {
	p := []string{"path", pathEngines}
	adapters := ruleAdapters()
	gauge := func(agg string, m engine.Metric) string {
		var parts []string
		for _, a := range adapters {
			parts = append(parts, metricExprs(a, m, perTarget(agg), lastGauge)...)
		}
		if len(parts) == 0 {
			return ""
		}
		return toTargetLabels(agg, union(parts...))
	}
	out := []Rule{record(n.TargetRunning, gauge("sum", engine.Running), p...)}
	for _, q := range []struct {
		name string
		m    engine.Metric
	}{
		{"waiting", engine.Waiting},
		{"bootstrap", engine.QueueBootstrap},
		{"inflight", engine.QueueInflight},
		{"prealloc", engine.QueuePrealloc},
		{"transfer", engine.QueueTransfer},
	} {
		if e := gauge("sum", q.m); e != "" {
			out = append(out, record(n.TargetQueue, e, "path", pathEngines, "queue", q.name))
		}
	}
	out = append(out, record(n.TargetKVUsage, gauge("avg", engine.KVUsage), p...))
	// The engines awake, from a state set (one series per sleep state).
	var awake []string
	for _, a := range adapters {
		for _, f := range a.Families {
			if g, ok := byValueFamily(f, engine.EnginesAwake); ok && !f.Deprecated && f.Skip == "" && f.KV == engine.KVAuto {
				awake = append(awake, series(perTarget("sum"), a, []engine.Family{g}, "", lastGauge))
			}
		}
	}
	if len(awake) > 0 {
		out = append(out, record(n.TargetEnginesAwake, toTargetLabels("sum", union(awake...)), p...))
	}
	return out
}

// waitingReasonRules record vLLM's waiting by reason per target on the
// engines path (gauges read by a label's value). No alert reads them, so
// they run with the alerts, not in the one-second group.
func waitingReasonRules(n Names) []Rule {
	var out []Rule
	for _, q := range []struct {
		name string
		m    engine.Metric
	}{{"waiting_capacity", engine.WaitingCapacity}, {"waiting_deferred", engine.WaitingDeferred}} {
		var parts []string
		for _, a := range ruleAdapters() {
			for _, f := range a.Families {
				if g, ok := byValueFamily(f, q.m); ok && !f.Deprecated && f.Skip == "" && f.KV == engine.KVAuto {
					parts = append(parts, series(perTarget("sum"), a, []engine.Family{g}, "", lastGauge))
				}
			}
		}
		if len(parts) > 0 {
			out = append(out, record(n.TargetQueue, toTargetLabels("sum", union(parts...)), "path", pathEngines, "queue", q.name))
		}
	}
	return out
}

// failureRules record the KV transfer failure rates over a minute, for
// both paths. They feed an alert only, so they run with the alerts, not in
// the one-second group.
func failureRules(n Names) []Rule {
	var failures []string
	rate := func(s string) string { return rangeFn("rate", s, failureWindow) }
	for _, c := range engine.Connectors() {
		a, _ := engine.Lookup(c.Engine)
		for _, f := range a.Families {
			if f.KV == c.Source && isFailure(f) && !f.Deprecated && f.Skip == "" {
				failures = append(failures, series(perTarget("sum"), a, []engine.Family{f}, "", rate))
			}
		}
	}
	return []Rule{
		record(n.TargetKVFailures, ptdmonSum("sum", targetBy, rangeFn("rate", "ptd_kv_transfer_failures_total", failureWindow)), "path", pathPtdmon),
		record(n.TargetKVFailures, toTargetLabels("sum", union(failures...)), "path", pathEngines),
	}
}

// An aggregation turns the union of an adapter's selectors into recorded
// series: one per target (perTarget) or one per engine process (perProcess).
type aggregation func(a engine.Adapter, expr string) string

func perTarget(agg string) aggregation {
	return func(_ engine.Adapter, e string) string { return sumBy(agg, engineBy, e) }
}

// perProcess adds a process's finish reasons and the spellings of one
// family (ptd_part) and keeps every other label, so each output series is
// one process's counter: it resets only when that process restarts.
func perProcess(a engine.Adapter, e string) string {
	without := "ptd_part"
	if a.FinishedLabel != "" {
		without += ", " + a.FinishedLabel
	}
	return fmt.Sprintf("sum without (%s) (%s)", without, e)
}

// metricExprs are adapter a's per-target expressions for metric m from its
// own families (not its connectors'): the current families, falling back
// to the deprecated ones only for targets the current ones have nothing
// for (engines export both for a while: they must not be added), and the
// role-gated families of a multi-role process as a part of their own.
func metricExprs(a engine.Adapter, m engine.Metric, agg aggregation, inner func(string) string) []string {
	var cur, dep, gated []engine.Family
	for _, f := range a.Families {
		switch {
		case f.Metric != m || f.ByLabel != "" || f.KV != engine.KVAuto || f.Skip != "" || f.Sizes:
		case f.Role != engine.RoleUnknown:
			gated = append(gated, f)
		case f.Deprecated:
			dep = append(dep, f)
		default:
			cur = append(cur, f)
		}
	}
	var parts []string
	for _, f := range append(cur, dep...) {
		parts = append(parts, series(agg, a, []engine.Family{f}, "", inner))
	}
	var out []string
	if len(parts) > 0 {
		out = append(out, fallback(parts...))
	}
	if len(gated) > 0 {
		out = append(out, series(agg, a, gated, "", inner))
	}
	return out
}

// series is the per-target aggregation of families of adapter a (their
// names plus suffix), each selector wrapped in inner (a range function, or
// nothing for gauges): replicated ranks collapsed, split series and other
// finish reasons left out, an unset model label emptied.
func series(agg aggregation, a engine.Adapter, fams []engine.Family, suffix string, inner func(string) string) string {
	if inner == nil {
		inner = func(s string) string { return s }
	}
	var sels []string
	for _, f := range fams {
		for _, s := range selectors(a, f, suffix) {
			sels = append(sels, inner(s))
		}
	}
	e := union(sels...)
	if len(a.RankLabels) > 0 {
		e = collapseRanks(a.RankLabels, e)
	}
	if a.Unset != "" {
		e = fmt.Sprintf(`label_replace(%s, "%s", "", "%s", "%s")`, e, a.ModelLabel, a.ModelLabel, a.Unset)
	}
	return agg(a, e)
}

// selectors are the selectors of family f: ptdmon's targets only (a
// role-gated family on targets of its role), without split series, and
// for an adapter whose prefix is optional, both spellings: the bare name,
// which is generic, only on targets declared as that engine.
func selectors(a engine.Adapter, f engine.Family, suffix string) []string {
	first := onlyPtd
	if f.Role != engine.RoleUnknown {
		first = fmt.Sprintf(`ptd_role="%s"`, f.Role)
	}
	var extra []string
	for _, l := range a.SplitLabels {
		extra = append(extra, l+`=""`)
	}
	if f.ByLabel != "" {
		// Only the label values the adapter reads.
		var vs []string
		for _, r := range f.ByValue {
			vs = append(vs, regexp.QuoteMeta(r.Value))
		}
		extra = append(extra, f.ByLabel+"=~"+strconv.Quote(strings.Join(vs, "|")))
	}
	if f.Finished {
		// One != per reason, not a regular expression: cheaper to match.
		for _, r := range a.NotCompleted {
			extra = append(extra, a.FinishedLabel+"!="+strconv.Quote(r.Value))
		}
	}
	if !a.PrefixOptional {
		return []string{sel(f.Name+suffix, append([]string{first}, extra...)...)}
	}
	var out []string
	bare, prefixed := strings.CutPrefix(f.Name, a.Prefix)
	if prefixed {
		out = append(out, sel(f.Name+suffix, append([]string{first}, extra...)...))
	}
	if !prefixed || !f.PrefixOnly {
		out = append(out, sel(bare+suffix, append([]string{first, fmt.Sprintf(`ptd_engine="%s"`, a.Engine)}, extra...)...))
	}
	return out
}

// kvRequestRules record B_request per path: ptdmon exports the value it
// uses; for the engines path it is a constant from ptdmon.yaml. Unset, no
// series is recorded, KV req/s stays absent (never 0) and an alert fires.
// With pools of their own (pools: in ptdmon.yaml) each pool has its own on
// both paths, and a pool without one has none (docs/pools.md).
func kvRequestRules(n Names, bytesPerRequest int64, pools map[string]int64) []Rule {
	if len(pools) > 0 {
		return poolKVRequestRules(n, pools)
	}
	out := []Rule{record(n.KVRequestBytes, "max(ptd_kv_request_bytes)", "path", pathPtdmon)}
	if bytesPerRequest > 0 {
		out = append(out, record(n.KVRequestBytes, "vector("+strconv.FormatInt(bytesPerRequest, 10)+")", "path", pathEngines))
	}
	return out
}

// stageRequestRules add instances into the prefill and decode stages.
// Rates are taken per series before any sum, so a counter reset on one
// instance never shows as a negative step of the total.
func stageRequestRules(n Names) []Rule {
	var out []Rule
	for i := range 2 {
		out = append(out,
			record(n.Stage[i], sumBy("sum", stageBy, sel(n.TargetCompleted[i], `role="prefill"`)), "stage", "prefill"),
			record(n.Stage[i], sumBy("sum", stageBy, sel(n.TargetCompleted[i], `role="decode"`)), "stage", "decode"),
		)
	}
	return out
}

// stageKVRules add the KV bytes of every instance and divide by B_request.
// The KV curve adds the target rates itself rather than reading the path's
// sum: vmalert sees each recording it wrote back a step late, and one more
// step left the curve mostly absent there.
func stageKVRules(n Names, on string) []Rule {
	var out []Rule
	for i := range 2 {
		sum := sumBy("sum", stageBy, n.TargetKVBytes[i])
		out = append(out,
			record(n.PathKVBytes[i], sum),
			// x / (y > 0): with B_request unset or 0 the KV rate is absent.
			record(n.Stage[i], fmt.Sprintf("%s / on (%s) group_left () (%s > 0)", sum, on, n.KVRequestBytes), "stage", "kv"),
		)
	}
	return out
}

// YAML writes the rule file.
func (f RuleFile) YAML() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("# Generated by `ptdmon gen rules`; do not edit.\n")
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(f); err != nil {
		return nil, fmt.Errorf("encode rules: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("encode rules: %w", err)
	}
	return b.Bytes(), nil
}

// isFailure: the family counts failed KV transfers, of any class.
func isFailure(f engine.Family) bool {
	if _, ok := f.Metric.FailureClass(); ok && f.ByLabel == "" {
		return true
	}
	for _, r := range f.ByValue {
		if _, ok := r.Metric.FailureClass(); ok {
			return true
		}
	}
	return false
}

// byValueFamily is f narrowed to the label values it reads as m, for a
// family read by a label's value.
func byValueFamily(f engine.Family, m engine.Metric) (engine.Family, bool) {
	if f.ByLabel == "" {
		return f, false
	}
	g := f
	g.ByValue = reasonsOf(f.ByValue, m)
	return g, len(g.ByValue) > 0
}

// reasonsOf are the label values of rs read as m.
func reasonsOf(rs []engine.Reason, m engine.Metric) []engine.Reason {
	var keep []engine.Reason
	for _, r := range rs {
		if r.Metric == m {
			keep = append(keep, r)
		}
	}
	return keep
}
