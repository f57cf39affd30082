package gen

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/grafana/grafana-foundation-sdk/go/stat"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"

	"github.com/ptdmon/ptdmon/internal/engine"
)

// ptdmon's verdict series (internal/metrics, names.go), which the
// verdict panel reads.
const (
	metricBottleneck     = "ptd_bottleneck_stage"
	metricPoolBottleneck = "ptd_pool_bottleneck_stage"
)

// DashboardRefresh is the dashboards' refresh: Grafana's default
// min_refresh_interval, which every Grafana accepts.
const DashboardRefresh = "5s"

// Dashboard UIDs, stable so links and provisioning keep working.
const (
	UIDOverview = "ptdmon-overview"
	UIDInstance = "ptdmon-instance"
)

// Filters every recorded-series query carries.
const (
	filterPath   = `path=~"$path"`
	filterModel  = `model=~"$model"`
	filterPool   = `pool=~"$pool"`
	filterTarget = `target=~"$target"`
)

var ds = common.DataSourceRef{Type: cog.ToPtr("prometheus"), Uid: cog.ToPtr("${datasource}")}

// query is one PromQL target of a panel.
type query struct{ expr, legend string }

// panelSpec describes one time series panel; table-driven so a dashboard
// reads as a list of what it shows.
type panelSpec struct {
	title, desc, unit string
	span, height      uint32
	max               *float64
	queries           []query
}

func (p panelSpec) build() *timeseries.PanelBuilder {
	b := timeseries.NewPanelBuilder().Title(p.title).Description(p.desc).
		Datasource(ds).Span(p.span).Height(p.height).Min(0).
		Legend(common.NewVizLegendOptionsBuilder().ShowLegend(true).
			DisplayMode(common.LegendDisplayModeList).Placement(common.LegendPlacementBottom)).
		Tooltip(common.NewVizTooltipOptionsBuilder().Mode(common.TooltipDisplayModeMulti).Sort(common.SortOrderNone))
	if p.unit != "" {
		b.Unit(p.unit)
	}
	if p.max != nil {
		b.Max(*p.max)
	}
	for i, q := range p.queries {
		b.WithTarget(prometheus.NewDataqueryBuilder().Datasource(ds).Expr(q.expr).
			LegendFormat(q.legend).Range().RefId(string(rune('A' + i))))
	}
	return b
}

type rowSpec struct {
	title  string
	panels []panelSpec
}

func variables(n Names, w string, withTarget bool) []cog.Builder[dashboard.VariableModel] {
	rate := n.Stage[1]
	vars := []cog.Builder[dashboard.VariableModel]{
		dashboard.NewDatasourceVariableBuilder("datasource").Label("Data source").Type("prometheus"),
		dashboard.NewCustomVariableBuilder("path").Label("Path").
			Description("ptdmon: rates from ptdmon's /metrics; engines: rates from the engines' own counters").
			Values(dashboard.StringOrMap{String: cog.ToPtr(pathPtdmon + "," + pathEngines)}).
			Multi(true).IncludeAll(true).AllValue(".*").
			Current(option("All", "$__all")),
		// A pool is the instances that serve one model together
		// (docs/pools.md): its stages are summed apart from other pools'.
		dashboard.NewQueryVariableBuilder("pool").Label("Pool").Datasource(ds).
			Query(dashboard.StringOrMap{String: cog.ToPtr("label_values(" + rate + ", pool)")}).
			Definition("label_values(" + rate + ", pool)").
			Refresh(dashboard.VariableRefreshOnTimeRangeChanged).
			Multi(true).IncludeAll(true).AllValue(".*").Current(option("All", "$__all")),
		dashboard.NewQueryVariableBuilder("model").Label("Model").Datasource(ds).
			Query(dashboard.StringOrMap{String: cog.ToPtr("label_values(" + rate + ", model)")}).
			Definition("label_values(" + rate + ", model)").
			Refresh(dashboard.VariableRefreshOnTimeRangeChanged).
			Multi(true).IncludeAll(true).AllValue(".*").Current(option("All", "$__all")),
		dashboard.NewCustomVariableBuilder("window").Label("Rate").
			Description("instant: irate (last two samples); " + w + ": rate over the window W").
			Values(dashboard.StringOrMap{String: cog.ToPtr("instant : " + n.Ops[0] + "," + w + " : " + n.Ops[1])}).
			Current(option(w, n.Ops[1])),
	}
	if withTarget {
		q := "label_values(" + n.TargetCompleted[1] + "{" + filterPath + "}, target)"
		vars = append(vars, dashboard.NewQueryVariableBuilder("target").Label("Instance").Datasource(ds).
			Query(dashboard.StringOrMap{String: cog.ToPtr(q)}).Definition(q).
			Refresh(dashboard.VariableRefreshOnTimeRangeChanged).Sort(dashboard.VariableSortAlphabeticalAsc).
			Multi(true).IncludeAll(true).AllValue(".*").Current(option("All", "$__all")))
	}
	return vars
}

func option(text, value string) dashboard.VariableOption {
	return dashboard.VariableOption{
		Selected: cog.ToPtr(true),
		Text:     dashboard.StringOrArrayOfString{String: cog.ToPtr(text)},
		Value:    dashboard.StringOrArrayOfString{String: cog.ToPtr(value)},
	}
}

func newDashboard(uid, title, desc string) *dashboard.DashboardBuilder {
	return dashboard.NewDashboardBuilder(title).Uid(uid).Description(desc).
		Tags([]string{"ptdmon", "llm", "disaggregated", "generated"}).
		// Grafana refuses a refresh below its min_refresh_interval (5 s
		// unless lowered), so the dashboards open at 5 s; where it is
		// lowered to 1 s (the compose stack does), the picker offers 1 s,
		// the collector's and the scrape's interval.
		Refresh(DashboardRefresh).Time("now-15m", "now").Timezone(common.TimeZoneBrowser).
		Tooltip(dashboard.DashboardCursorSyncCrosshair).
		Timepicker(dashboard.NewTimePickerBuilder().RefreshIntervals([]string{"1s", "5s", "10s", "30s", "1m"}))
}

// stageFilter is the filter of stage-level recordings.
var stageFilter = []string{filterPath, filterPool, filterModel}

// latencyPanels query the engines' histograms: ptdmon does not re-export
// them, so these need Prometheus to scrape the engines (the engines path).
func latencyPanels(by, extra string) []panelSpec {
	fam := []struct {
		title  string
		metric engine.Metric
	}{{"TTFT", engine.TTFT}, {"ITL", engine.ITL}, {"E2E latency", engine.E2E}}
	var out []panelSpec
	for _, f := range fam {
		p := panelSpec{title: f.title + " p50 / p99", unit: "s", span: 8, height: 8,
			desc: "histogram_quantile over the engines' own histograms (needs the engines scrape job); one quantile per engine kind and role, since bucket layouts differ between engines."}
		for _, q := range []string{"0.5", "0.99"} {
			// The histogram families come from the engine adapters' tables.
			for _, a := range latencyEngines(f.metric) {
				m := []string{onlyPtd, `model_name=~"$model"`}
				if extra != "" {
					m = append(m, extra)
				}
				expr := fmt.Sprintf("histogram_quantile(%s, sum by (le, %s) (rate(%s[$__rate_interval])))",
					q, by, sel(a.fam+"_bucket", m...))
				p.queries = append(p.queries, query{expr, fmt.Sprintf("%s p%s {{%s}}", a.name, strings.TrimPrefix(q, "0."), by)})
			}
		}
		out = append(out, p)
	}
	return out
}

// latencyFamily is one engine's histogram family behind a latency panel.
type latencyFamily struct{ name, fam string }

// latencyEngines are the registered engines whose adapters opt in to
// latency panels, each with its histogram family of metric m.
func latencyEngines(m engine.Metric) []latencyFamily {
	var out []latencyFamily
	for _, a := range ruleAdapters() {
		if !a.LatencyPanels {
			continue
		}
		if f, ok := a.Family(m, engine.KVAuto); ok {
			out = append(out, latencyFamily{a.Display, f.Name})
		}
	}
	return out
}

func overviewRows(n Names) []rowSpec {
	one := 1.0
	win := func(names [2]string) string { return strings.Replace(names[1], n.Ops[1], "${window}", 1) }
	f := stageFilter
	return []rowSpec{
		{"Utilisation", []panelSpec{
			{title: "Stage utilisation", unit: "percentunit", span: 24, height: 7, max: &one,
				desc: "The share of each stage's capacity its load uses, before anything saturates (docs/advisor.md#capacity-below-saturation): prefill its instances' busy fraction, decode its running batch over max_num_seqs. Engines path: each pool's over W, from the engines' busy-time signals (docs/prometheus.md#utilisation; none for a pool where an instance lacks the signal, or decode without max_num_seqs). ptdmon: the deployment's over the last minute, KV too (at most, for transfer_time), from ptd_stage_utilisation.",
				queries: []query{
					{sel(n.StageUtilisation, f...), "{{pool}} {{stage}} · {{path}}"},
					{"ptd_stage_utilisation", "deployment {{stage}} ({{basis}}) · ptdmon"},
				}},
		}},
		{"Raw signals behind the three curves", []panelSpec{
			{title: "Prefill running", unit: "short", span: 6, height: 7,
				desc:    "Requests in the prefill instances' running batches (a gauge: shown raw, never differentiated).",
				queries: []query{{sumBy("sum", "path", sel(n.TargetRunning, append([]string{`role="prefill"`}, f...)...)), "prefill running · {{path}}"}}},
			{title: "Decode running", unit: "short", span: 6, height: 7,
				desc:    "Requests in the decode instances' running batches.",
				queries: []query{{sumBy("sum", "path", sel(n.TargetRunning, append([]string{`role="decode"`}, f...)...)), "decode running · {{path}}"}}},
			{title: "KV bytes/s", unit: "Bps", span: 6, height: 7,
				desc:    "KV-cache bytes per second over every connector; divided by B_request it is the KV req/s curve.",
				queries: []query{{sel(win(n.PathKVBytes), f...), "KV bytes/s · {{path}}"}}},
			{title: "KV bytes transferred (cumulative)", unit: "bytes", span: 6, height: 7,
				desc:    "flagcx_total_bytes_transferred_total: every engine's KV bytes, carried across restarts (exported by ptdmon).",
				queries: []query{{"flagcx_total_bytes_transferred_total", "all engines"}}},
		}},
		{"Queues and KV cache", []panelSpec{
			{title: "Queues", unit: "short", span: 12, height: 8,
				desc:    "Waiting requests and SGLang's P/D hand-off queues (bootstrap, inflight on prefill; prealloc, transfer on decode). A queue that keeps growing sits in front of the bottleneck.",
				queries: []query{{sumBy("sum", "path, role, queue", sel(n.TargetQueue, f...)), "{{role}} {{queue}} · {{path}}"}}},
			{title: "KV cache usage", unit: "percentunit", span: 12, height: 8, max: &one,
				desc:    "Fraction of each instance's KV cache in use.",
				queries: []query{{sel(n.TargetKVUsage, f...), "{{target}} ({{role}}) · {{path}}"}}},
		}},
		{"KV failures by class", []panelSpec{
			{title: "KV failures by class", unit: "percentunit", span: 12, height: 8,
				desc:    "Each failure class's share of the KV transfers attempted, per model (network, timeout, expiry of the KV lease, lost notification, unclassified); each has its alert (docs/prometheus.md). Both paths: ptdmon's /metrics and the connectors' own failure counters, classed alike.",
				queries: []query{{sel(modelFailureRatio, filterPath, filterModel), "{{model}} {{class}}"}}},
			{title: "Prompt tokens recomputed on decode", unit: "percentunit", span: 12, height: 8,
				desc:    "The share of decode's prompt tokens decode computed itself (vLLM's prompt_tokens_by_source_total): after failed KV loads, or for requests sent to decode alone. Decode doing prefill work.",
				queries: []query{{sel(modelRecomputeRatio, filterPath, filterModel), "{{model}}"}}},
			{title: "Load shed before the engine", unit: "percentunit", span: 12, height: 7,
				desc:    "The share of the load offered to each model that routers and engines turned away for capacity before any engine queued it (llm-d's flow control, the SGLang gateway's overload shedding, Dynamo's overload errors, SGLang's queue rejections, vLLM's admission rejections): offered = served on decode + shed. Stage rates count only what was served.",
				queries: []query{{sel(modelShedRatio, filterPath, filterModel), "{{model}} · {{path}}"}}},
			{title: "Requests sent again to another worker", unit: "percentunit", span: 12, height: 7,
				desc:    "The share of the requests sent to each model's workers (served + sent again) that a router sent again after their worker was lost or failed them (Dynamo's migrations, the SGLang gateway's retries, once per attempt): the engines redo that work, so the stage rates run above the requests served (docs/design.md#requests-sent-again).",
				queries: []query{{sel(modelMigratedRatio, filterPath, filterModel), "{{model}} · {{path}}"}}},
		}},
		{"Routers and where TTFT goes", []panelSpec{
			{title: "Router arrival and P/D decisions", unit: "reqps", span: 12, height: 8,
				desc: "Requests per second arriving at each pool's routers over the window, those answered with an error, and where the routers sent them (remote_prefill, decode_only) where they export the decision (docs/pools.md#routers). From ptdmon's /metrics; a pool without a router has no series.",
				queries: []query{
					{sel("ptd_router_arrival_requests_per_second", filterPool), "{{pool}} arrival"},
					{sel("ptd_router_rejections_per_second", filterPool), "{{pool}} rejected"},
					{sel("ptd_router_decisions_per_second", filterPool), "{{pool}} {{decision}}"},
				}},
			{title: "Where TTFT goes (mean seconds)", unit: "s", span: 12, height: 8,
				desc: "The mean of each phase of the time to first token per pool over the window (router, queue, prefill, bootstrap, handover, kv_transfer, first_decode_step), from the engines' and routers' phase histograms, and the TTFT the instances measured: the gap between the phases' sum and the TTFT is what no engine times (docs/pools.md#where-ttft-goes). A phase no engine of the pool times has no series. From ptdmon's /metrics.",
				queries: []query{
					{sel("ptd_pool_ttft_phase_seconds", filterPool), "{{pool}} {{phase}}"},
					{sel("ptd_pool_ttft_seconds", filterPool), "{{pool}} TTFT measured"},
				}},
		}},
		{"Latency (engines scraped directly)", latencyPanels("ptd_role", "")},
		{"Per instance", []panelSpec{
			{title: "Completions per instance", unit: "reqps", span: 12, height: 8,
				desc:    "Completion counter rate of each instance; prefill instances add up to Prefill req/s, decode instances to Decode req/s.",
				queries: []query{{sel(win(n.TargetCompleted), f...), "{{target}} ({{role}}) · {{path}}"}}},
			{title: "KV bytes/s per instance", unit: "Bps", span: 12, height: 8,
				desc:    "Counted on the side each connector counts: FlagCX and SGLang on prefill, NIXL on decode.",
				queries: []query{{sumBy("sum", "path, target, role", sel(win(n.TargetKVBytes), f...)), "{{target}} ({{role}}) · {{path}}"}}},
			{title: "Targets up", unit: "short", span: 24, height: 6, max: &one,
				desc: "1 while the target's newest scrape succeeded: ptdmon's view (ptd_target_up) and Prometheus' (up).",
				queries: []query{
					{"ptd_target_up", "{{target}} · ptdmon"},
					{`up{ptd_role!=""}`, "{{ptd_target}} · engines"},
					{`up{job="ptdmon"}`, "ptdmon {{instance}}"},
				}},
		}},
	}
}

// Overview is the main dashboard: the three stage rates on one time axis,
// the raw series that explain them below, then queues, KV usage, latency
// and a per-instance breakdown.
func Overview(in Input) (dashboard.Dashboard, error) {
	in = in.withDefaults()
	w := promDuration(in.Window)
	n := RecordNames(w)
	rates := panelSpec{
		title: "Prefill, KV transfer and Decode req/s", unit: "reqps", span: 20, height: 10,
		desc: "The three stages on one time axis, same rate flavour and window for all three. KV req/s = KV bytes/s ÷ B_request. " +
			"A stage below the one feeding it, with a growing queue in front of it, is the bottleneck.",
		queries: []query{{sel(strings.Replace(n.Stage[1], n.Ops[1], "${window}", 1), stageFilter...), "{{stage}} · {{path}}"}},
	}
	b := newDashboard(UIDOverview, "ptdmon — P/D stage rates",
		"Prefill, KV-transfer and Decode requests per second of a prefill/decode-disaggregated deployment. Generated by `ptdmon gen grafana`.")
	for _, v := range variables(n, w, false) {
		b.WithVariable(v)
	}
	b.Link(dashboard.NewDashboardLinkBuilder("Instance drill-down").Type(dashboard.DashboardLinkTypeLink).
		Url("/d/" + UIDInstance).IncludeVars(true).KeepTime(true))
	b.WithRow(dashboard.NewRowBuilder("Stage rates"))
	b.WithPanel(rates.build())
	b.WithPanel(stat.NewPanelBuilder().Title("B_request").Datasource(ds).Span(4).Height(10).Unit("bytes").
		Description("Bytes of one request's KV cache, configured once per test run; KV req/s is absent while it is unset.").
		GraphMode(common.BigValueGraphModeNone).ColorMode(common.BigValueColorModeNone).
		WithTarget(prometheus.NewDataqueryBuilder().Datasource(ds).Expr(sel(n.KVRequestBytes, filterPath)).
			LegendFormat("{{path}}").Instant().RefId("A")))
	verdictRow(b)
	addRows(b, overviewRows(n))
	return b.Build()
}

// verdictRow is what the deployment needs done: the bottleneck verdict,
// the deployment's and each pool's, the advised instances and KV
// bandwidth, and the SLO attainment the rules of `gen slo` record.
func verdictRow(b *dashboard.DashboardBuilder) {
	b.WithRow(dashboard.NewRowBuilder("Verdict, advice and SLO"))
	instant := func(expr, legend, ref string) *prometheus.DataqueryBuilder {
		return prometheus.NewDataqueryBuilder().Datasource(ds).Expr(expr).LegendFormat(legend).Instant().RefId(ref)
	}
	b.WithPanel(stat.NewPanelBuilder().Title("Bottleneck verdict").Datasource(ds).Span(8).Height(6).
		Description("The stage limiting the deployment now, and each pool's (ptd_bottleneck_stage, ptd_pool_bottleneck_stage: 1 for the stage named): prefill, kv, admission, decode, mixed, balanced or insufficient (docs/web.md#the-verdict). From ptdmon's /metrics.").
		TextMode(common.BigValueTextModeName).GraphMode(common.BigValueGraphModeNone).ColorMode(common.BigValueColorModeNone).
		WithTarget(instant(metricBottleneck+" == 1", "deployment: {{stage}}", "A")).
		WithTarget(instant(sel(metricPoolBottleneck, filterPool)+" == 1", "{{pool}}: {{stage}}", "B")))
	b.WithPanel(stat.NewPanelBuilder().Title("Advised instances").Datasource(ds).Span(8).Height(6).Unit("short").
		Description("The smallest count of each stage whose capacity, learned while the stage was saturated, carries the observed arrival rate at the configured headroom (ptd_recommended_instances; docs/advisor.md). A stage that has not saturated yet has no series: its count is not known, never 0. Each pool's own advice is on ptdmon's page and /api/v1/advice.").
		GraphMode(common.BigValueGraphModeNone).ColorMode(common.BigValueColorModeNone).TextMode(common.BigValueTextModeValueAndName).
		WithTarget(instant("ptd_recommended_instances", "{{stage}}", "A")))
	b.WithPanel(stat.NewPanelBuilder().Title("Advised KV bandwidth").Datasource(ds).Span(8).Height(6).Unit("Bps").
		Description("The KV bandwidth that carries the observed arrival rate at the configured headroom: λ × B_request ÷ (1 − headroom) (ptd_recommended_kv_bytes_per_second).").
		GraphMode(common.BigValueGraphModeNone).ColorMode(common.BigValueColorModeNone).
		WithTarget(instant("ptd_recommended_kv_bytes_per_second", "KV", "A")))
	b.WithPanel(panelSpec{title: "SLO attainment by role", unit: "percentunit", span: 24, height: 8,
		desc:    "The fraction of each role's observations within each SLO threshold over a minute, as the recording rules of `ptdmon gen slo` read the engines' histograms (engines path; no series without those rules). Each role as its own instances time it: on vLLM and TensorRT-LLM a decode instance's TTFT and E2E cover the decode leg only, after prefill, so they are not the whole request's; ptdmon's page and /api/v1/advice give the whole request's (docs/advisor.md#the-whole-requests-slo).",
		queries: []query{{sel("role:ptd_slo_attainment:ratio_rate1m", filterPool, filterModel), "{{pool}} {{role}} {{slo}} ≤ {{threshold}} s"}}}.build().Max(1))
}

func addRows(b *dashboard.DashboardBuilder, rows []rowSpec) {
	for _, r := range rows {
		b.WithRow(dashboard.NewRowBuilder(r.title))
		for _, p := range r.panels {
			b.WithPanel(p.build())
		}
	}
}

// Instance is the per-instance drill-down dashboard.
func Instance(in Input) (dashboard.Dashboard, error) {
	in = in.withDefaults()
	w := promDuration(in.Window)
	n := RecordNames(w)
	win := func(names [2]string) string { return strings.Replace(names[1], n.Ops[1], "${window}", 1) }
	f := []string{filterPath, filterPool, filterModel, filterTarget}
	one := 1.0
	rows := []rowSpec{
		{"Rates", []panelSpec{
			{title: "Completions req/s", unit: "reqps", span: 12, height: 8,
				queries: []query{{sel(win(n.TargetCompleted), f...), "{{target}} ({{role}}) · {{path}}"}}},
			{title: "KV bytes/s by source", unit: "Bps", span: 12, height: 8,
				desc:    "source is the connector counter the engines path read (" + kvSourceNames() + ").",
				queries: []query{{sel(win(n.TargetKVBytes), f...), "{{target}} {{source}} · {{path}}"}}},
		}},
		{"Raw signals", []panelSpec{
			{title: "Running", unit: "short", span: 8, height: 8,
				queries: []query{{sel(n.TargetRunning, f...), "{{target}} · {{path}}"}}},
			{title: "Queues", unit: "short", span: 8, height: 8,
				queries: []query{{sel(n.TargetQueue, f...), "{{target}} {{queue}} · {{path}}"}}},
			{title: "KV cache usage", unit: "percentunit", span: 8, height: 8, max: &one,
				queries: []query{{sel(n.TargetKVUsage, f...), "{{target}} · {{path}}"}}},
		}},
		{"Health", []panelSpec{
			{title: "KV transfer failures/s (1m)", unit: "short", span: 8, height: 7,
				queries: []query{{sel(n.TargetKVFailures, f...), "{{target}} · {{path}}"}}},
			{title: "Up", unit: "short", span: 8, height: 7, max: &one,
				queries: []query{
					{sel("ptd_target_up", filterTarget), "{{target}} · ptdmon"},
					{sel("up", onlyPtd, `ptd_target=~"$target"`), "{{ptd_target}} · engines"},
				}},
			{title: "Engines awake", unit: "short", span: 8, height: 7,
				desc: "vLLM's engines awake per instance (sleep mode): 0 is an instance asleep on purpose, neither down nor stalled; no series where the engine has no sleep mode.",
				queries: []query{
					{sel("ptd_engines_awake", filterTarget), "{{target}} · ptdmon"},
					{sel(n.TargetEnginesAwake, f...), "{{target}} · {{path}}"},
				}},
		}},
		{"Latency (engines scraped directly)", latencyPanels("ptd_target", `ptd_target=~"$target"`)},
	}
	b := newDashboard(UIDInstance, "ptdmon — instances",
		"Per-instance drill-down of the P/D stage rates. Generated by `ptdmon gen grafana`.")
	for _, v := range variables(n, w, true) {
		b.WithVariable(v)
	}
	b.Link(dashboard.NewDashboardLinkBuilder("Stage rates").Type(dashboard.DashboardLinkTypeLink).
		Url("/d/" + UIDOverview).IncludeVars(true).KeepTime(true))
	addRows(b, rows)
	return b.Build()
}

// Dashboards returns every dashboard as indented JSON by file name.
func Dashboards(in Input) (map[string][]byte, error) {
	out := map[string][]byte{}
	for name, build := range map[string]func(Input) (dashboard.Dashboard, error){
		"ptdmon-overview.json": Overview,
		"ptdmon-instance.json": Instance,
	} {
		d, err := build(in)
		if err != nil {
			return nil, fmt.Errorf("dashboard %s: %w", name, err)
		}
		b, err := json.MarshalIndent(d, "", "  ")
		if err != nil {
			return nil, fmt.Errorf("dashboard %s: %w", name, err)
		}
		out[name] = append(b, '\n')
	}
	return out, nil
}
