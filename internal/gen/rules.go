package gen

import (
	"bytes"
	"fmt"
	"strconv"

	"go.yaml.in/yaml/v3"
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
	TargetCompleted  [2]string // irate, rate<W>
	TargetKVBytes    [2]string
	PathKVBytes      [2]string
	Stage            [2]string
	KVRequestBytes   string
	TargetRunning    string
	TargetQueue      string
	TargetKVUsage    string
	TargetKVFailures string
	// Ops are the operation suffixes of [0] and [1]: "irate" and "rate<W>",
	// also the values of the dashboards' window variable.
	Ops [2]string
}

// failureWindow is the range of the failure rate alerts read: long enough
// that one failed transfer stays visible for a minute.
const failureWindow = "1m"

// RecordNames returns the recorded names for window w, following the
// level:metric:operations convention.
func RecordNames(w string) Names {
	ops := [2]string{"irate", "rate" + w}
	two := func(prefix string) [2]string { return [2]string{prefix + ops[0], prefix + ops[1]} }
	return Names{
		TargetCompleted:  two("target:ptd_requests_completed:"),
		TargetKVBytes:    two("target:ptd_kv_transfer_bytes:"),
		PathKVBytes:      two("path:ptd_kv_transfer_bytes:"),
		Stage:            two("stage:ptd_requests:"),
		KVRequestBytes:   "path:ptd_kv_request_bytes:max",
		TargetRunning:    "target:ptd_requests_running:sum",
		TargetQueue:      "target:ptd_queue_requests:sum",
		TargetKVUsage:    "target:ptd_kv_cache_usage_ratio:avg",
		TargetKVFailures: "target:ptd_kv_transfer_failures:rate" + failureWindow,
		Ops:              ops,
	}
}

// Rules returns the recording and alerting rules for both paths.
func Rules(in Input) RuleFile {
	in = in.withDefaults()
	w := promDuration(in.Window)
	n := RecordNames(w)
	var rec []Rule
	rec = append(rec, ptdmonTargetRules(n, w)...)
	rec = append(rec, engineTargetRules(n, w, in.KVSource)...)
	rec = append(rec, kvRequestRules(n, in.KVBytesPerRequest)...)
	rec = append(rec, stageRules(n)...)
	return RuleFile{Groups: []RuleGroup{
		// One group, so that every stage rule reads the target rules of the
		// same evaluation: rules of a group run in order at one timestamp.
		{Name: "ptdmon-stage-rates", Interval: "1s", Rules: rec},
		{Name: "ptdmon-alerts", Rules: alertRules(n)},
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
		out = append(out,
			record(n.TargetCompleted[i], sumBy("sum", targetBy, rangeFn(fn, "ptd_requests_completed_total", w)), p...),
			record(n.TargetKVBytes[i], sumBy("sum", targetBy, rangeFn(fn, "ptd_kv_transfer_bytes_total", w)), p...))
	}
	return append(out,
		record(n.TargetRunning, sumBy("sum", targetBy, "ptd_requests_running"), p...),
		record(n.TargetQueue, sumBy("sum", targetBy, "ptd_requests_waiting"), "path", pathPtdmon, "queue", "waiting"),
		record(n.TargetQueue, sumBy("sum", targetBy+", queue", "ptd_queue_requests"), p...),
		record(n.TargetKVUsage, sumBy("avg", targetBy, "ptd_kv_cache_usage_ratio"), p...),
		record(n.TargetKVFailures, sumBy("sum", targetBy, rangeFn("rate", "ptd_kv_transfer_failures_total", failureWindow)), p...),
	)
}

// kvByteSource is one engine counter of KV bytes, counted on the side its
// connector counts it (FlagCX and SGLang on prefill, NIXL on decode), so
// adding every source over every target counts each transfer once.
type kvByteSource struct {
	name, series string
	sglang       bool
	trtllm       bool
	scale        string
}

var kvByteSources = []kvByteSource{
	{name: "flagcx", series: "vllm:flagcx_total_bytes_transferred_total"},
	{name: "nixl", series: "vllm:nixl_bytes_transferred_sum"},
	{name: "mooncake", series: "vllm:mooncake_bytes_transferred_sum"},
	// Only the histogram (SGLang PR #19009 and later) has a cumulative _sum;
	// the older gauge of the same family name is not matched by _sum.
	{name: "sglang", series: "sglang:kv_transfer_total_mb_sum", sglang: true, scale: "1048576"},
	// Dynamo's per-request KV size histogram of TensorRT-LLM workers: its
	// _sum is a bytes counter. Dynamo always writes the trtllm_ prefix.
	{name: "dynamo", series: "trtllm_kv_transfer_bytes_sum", trtllm: true},
}

// engineSeries is the per-target aggregation of one engine series, with
// SGLang's replicated ranks collapsed and its per-priority split skipped.
func engineSeries(agg, inner string, sglang bool) string {
	if sglang {
		inner = sglangRanks(inner)
	}
	return sumBy(agg, engineBy, inner)
}

func vllmSel(name string, extra ...string) string {
	return sel(name, append([]string{onlyPtd}, extra...)...)
}

func sglangSel(name string) string {
	return sel(name, onlyPtd, `priority=""`)
}

// trtllmNotCompleted are the finish reasons of TensorRT-LLM's
// request_success_total that are not completions (engine.trtllmFinished).
const trtllmNotCompleted = `finished_reason!~"abort|aborted|error|cancelled|canceled|timeout"`

// trtllmEngine restricts TensorRT-LLM's unprefixed (older) names, which are
// generic, to targets declared as TensorRT-LLM.
const trtllmEngine = `ptd_engine="trtllm"`

// trtllmModel reads TensorRT-LLM's model_name="undefined" as no model, as
// ptdmon's adapter does.
func trtllmModel(expr string) string {
	return fmt.Sprintf(`label_replace(%s, "model_name", "", "model_name", "undefined")`, expr)
}

// trtllmSeries is the per-target aggregation of one TensorRT-LLM series
// under both spellings: trtllm_<name> (newer builds, Dynamo) and the bare
// <name> of older builds, only on TensorRT-LLM targets. A build exports
// one of them; were there both, they are added, like ptdmon's adapter does.
// inner wraps each selector (a range function, or nothing for gauges).
func trtllmSeries(agg, name string, inner func(string) string, extra ...string) string {
	if inner == nil {
		inner = func(s string) string { return s }
	}
	prefixed := sel("trtllm_"+name, append([]string{onlyPtd}, extra...)...)
	bare := sel(name, append([]string{onlyPtd, trtllmEngine}, extra...)...)
	return sumBy(agg, engineBy, trtllmModel(union(inner(prefixed), inner(bare))))
}

// trtllmCompleted are TensorRT-LLM's completions: request_success_total
// without aborted, failed, cancelled or timed-out requests, and
// num_requests_completed_total only on targets without the former; plus
// the disaggregated front server's per-phase counters, ctx_* read on its
// prefill target and gen_* on its decode target (the same URL added twice).
func trtllmCompleted(fn, w string) []string {
	rng := func(s string) string { return rangeFn(fn, s, w) }
	return []string{
		fallback(
			trtllmSeries("sum", "request_success_total", rng, trtllmNotCompleted),
			trtllmSeries("sum", "num_requests_completed_total", rng)),
		sumBy("sum", engineBy, trtllmModel(union(
			rng(sel("ctx_completed_requests_total", `ptd_role="prefill"`, trtllmEngine)),
			rng(sel("gen_completed_requests_total", `ptd_role="decode"`, trtllmEngine))))),
	}
}

// engineTargetRules compute the same target-level series straight from the
// engines' own counters and gauges (docs/design.md#the-three-curves,
// docs/engines.md#the-counters-behind-the-three-curves).
func engineTargetRules(n Names, w, kvSource string) []Rule {
	p := []string{"path", pathEngines}
	var out []Rule
	for i, fn := range []string{"irate", "rate"} {
		completed := union(append([]string{
			// Completions exclude aborted and failed requests.
			engineSeries("sum", rangeFn(fn, vllmSel("vllm:request_success_total", `finished_reason!~"abort|error"`), w), false),
			engineSeries("sum", rangeFn(fn, sglangSel("sglang:num_requests_total"), w), true),
		}, trtllmCompleted(fn, w)...)...)
		out = append(out, record(n.TargetCompleted[i], toTargetLabels("sum", completed), p...))
		for _, s := range kvByteSources {
			if kvSource != "" && kvSource != "auto" && kvSource != s.name {
				continue
			}
			matcher := vllmSel(s.series)
			if s.sglang {
				matcher = sglangSel(s.series)
			}
			e := engineSeries("sum", rangeFn(fn, matcher, w), s.sglang)
			if s.trtllm {
				e = sumBy("sum", engineBy, trtllmModel(rangeFn(fn, matcher, w)))
			}
			if s.scale != "" {
				e = s.scale + " * " + e
			}
			out = append(out, record(n.TargetKVBytes[i], toTargetLabels("sum", e), "path", pathEngines, "source", s.name))
		}
	}
	gauge := func(agg, vllm, sglang, trtllm string) string {
		var parts []string
		if vllm != "" {
			parts = append(parts, engineSeries(agg, vllmSel(vllm), false))
		}
		if sglang != "" {
			parts = append(parts, engineSeries(agg, sglangSel(sglang), true))
		}
		if trtllm != "" {
			parts = append(parts, trtllmSeries(agg, trtllm, nil))
		}
		return toTargetLabels(agg, union(parts...))
	}
	queue := func(q, expr string) Rule {
		return record(n.TargetQueue, expr, "path", pathEngines, "queue", q)
	}
	// The bootstrap queue was called prealloc on prefill before; read the
	// old name only where the new one is missing.
	bootstrap := toTargetLabels("sum", fallback(
		engineSeries("sum", sglangSel("sglang:num_prefill_bootstrap_queue_reqs"), true),
		engineSeries("sum", sglangSel("sglang:num_prefill_prealloc_queue_reqs"), true)))
	usage := toTargetLabels("avg", union(
		fallback(engineSeries("avg", vllmSel("vllm:kv_cache_usage_perc"), false),
			engineSeries("avg", vllmSel("vllm:gpu_cache_usage_perc"), false)),
		engineSeries("avg", sglangSel("sglang:token_usage"), true),
		trtllmSeries("avg", "kv_cache_utilization", nil)))
	var failures []string
	for _, f := range []struct {
		series string
		sglang bool
	}{
		{"vllm:flagcx_num_failed_transfers_total", false},
		{"vllm:flagcx_num_failed_recvs_total", false},
		{"vllm:nixl_num_failed_transfers_total", false},
		{"vllm:mooncake_num_failed_transfers_total", false},
		{"sglang:num_transfer_failed_reqs_total", true},
	} {
		s := vllmSel(f.series)
		if f.sglang {
			s = sglangSel(f.series)
		}
		failures = append(failures, engineSeries("sum", rangeFn("rate", s, failureWindow), f.sglang))
	}
	failures = append(failures, trtllmSeries("sum", "kv_transfer_failure_total",
		func(s string) string { return rangeFn("rate", s, failureWindow) }))
	return append(out,
		record(n.TargetRunning, gauge("sum", "vllm:num_requests_running", "sglang:num_running_reqs", "num_requests_running"), p...),
		queue("waiting", gauge("sum", "vllm:num_requests_waiting", "sglang:num_queue_reqs", "num_requests_waiting")),
		queue("bootstrap", bootstrap),
		queue("inflight", gauge("sum", "", "sglang:num_prefill_inflight_queue_reqs", "")),
		queue("prealloc", gauge("sum", "", "sglang:num_decode_prealloc_queue_reqs", "")),
		queue("transfer", gauge("sum", "", "sglang:num_decode_transfer_queue_reqs", "")),
		record(n.TargetKVUsage, usage, p...),
		record(n.TargetKVFailures, toTargetLabels("sum", union(failures...)), p...),
	)
}

// kvRequestRules record B_request per path: ptdmon exports the value it
// uses; for the engines path it is a constant from ptdmon.yaml. Unset, no
// series is recorded, KV req/s stays absent (never 0) and an alert fires.
func kvRequestRules(n Names, bytesPerRequest int64) []Rule {
	out := []Rule{record(n.KVRequestBytes, "max(ptd_kv_request_bytes)", "path", pathPtdmon)}
	if bytesPerRequest > 0 {
		out = append(out, record(n.KVRequestBytes, "vector("+strconv.FormatInt(bytesPerRequest, 10)+")", "path", pathEngines))
	}
	return out
}

// stageRules add instances into the three stages. Rates are taken per
// series before any sum, so a counter reset on one instance never shows as
// a negative step of the total.
func stageRules(n Names) []Rule {
	var out []Rule
	for i := range 2 {
		out = append(out,
			record(n.PathKVBytes[i], sumBy("sum", stageBy, n.TargetKVBytes[i])),
			record(n.Stage[i], sumBy("sum", stageBy, sel(n.TargetCompleted[i], `role="prefill"`)), "stage", "prefill"),
			// x / (y > 0): with B_request unset or 0 the KV rate is absent.
			record(n.Stage[i], fmt.Sprintf("%s / on (path) group_left () (%s > 0)", n.PathKVBytes[i], n.KVRequestBytes), "stage", "kv"),
			record(n.Stage[i], sumBy("sum", stageBy, sel(n.TargetCompleted[i], `role="decode"`)), "stage", "decode"),
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
