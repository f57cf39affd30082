package gen

import (
	"regexp"
	"sort"
	"testing"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
	"go.yaml.in/yaml/v3"

	"github.com/ptdmon/ptdmon/internal/engine"
)

// keepMatcher compiles the engines job's keep regex the way Prometheus
// does (anchored at both ends), read back from the generated config.
func keepMatcher(t *testing.T, in Input) *regexp.Regexp {
	t.Helper()
	if len(in.Targets) == 0 {
		in.Targets = exampleInput(t).Targets
	}
	var cfg promConfig
	raw, err := PrometheusConfig(in)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(raw, &cfg); err != nil {
		t.Fatal(err)
	}
	for _, sc := range cfg.ScrapeConfigs {
		if sc.JobName != JobEngines {
			continue
		}
		if len(sc.MetricRelabelConfigs) != 1 || sc.MetricRelabelConfigs[0].Action != "keep" {
			t.Fatalf("engines job metric_relabel_configs = %+v, want one keep", sc.MetricRelabelConfigs)
		}
		return regexp.MustCompile("^(?:" + sc.MetricRelabelConfigs[0].Regex + ")$")
	}
	t.Fatal("no engines job")
	return nil
}

// engineSeriesRead are the engine series names an expression selects:
// not recorded, not ptdmon's own, not Prometheus' synthetic ones.
func engineSeriesRead(t *testing.T, notEngine map[string]bool, exprs []string) []string {
	t.Helper()
	seen := map[string]bool{}
	for _, expr := range exprs {
		e, err := parser.NewParser(parser.Options{}).ParseExpr(expr)
		if err != nil {
			t.Fatalf("parse %q: %v", expr, err)
		}
		parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
			vs, ok := n.(*parser.VectorSelector)
			if !ok {
				return nil
			}
			name := vs.Name
			for _, m := range vs.LabelMatchers {
				if m.Name == labels.MetricName && m.Type == labels.MatchEqual {
					name = m.Value
				}
			}
			if !notEngine[name] {
				seen[name] = true
			}
			return nil
		})
	}
	var out []string
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// TestKeepListCoversEverySeriesRead: every engine series a generated rule
// (stage rates, alerts, SLO), dashboard query or ptdmon's TSDB source
// reads survives the engines job's keep-list, also for an engine
// registered later; and the keep-list does drop what nothing reads.
func TestKeepListCoversEverySeriesRead(t *testing.T) {
	engine.Register(engine.Adapter{
		Engine: "toy", Display: "ToyLLM", Order: 99, Prefix: "toy:", PrefixOptional: true, ModelLabel: "model_name",
		Families: []engine.Family{
			{Name: "toy:done_total", Type: "counter", Metric: engine.Completed},
			{Name: "toy:active", Type: "gauge", Metric: engine.Running},
			{Name: "toy:ttft_seconds", Type: "histogram", Metric: engine.TTFT},
		},
	})
	engine.RegisterConnector(engine.Connector{Source: "toylink", Engine: "toy", Order: 99, Families: []engine.Family{
		{Name: "toy:link_kib", Type: "histogram", Metric: engine.KVBytes, Sizes: true, Count: engine.KVTransfers, Scale: 1024},
	}})
	t.Cleanup(func() { engine.Unregister("toy") })

	in := Input{KVBytesPerRequest: 1 << 30}
	keep := keepMatcher(t, in)
	rules := Rules(in)
	notEngine := map[string]bool{"up": true}
	for _, n := range exportedNames(t) {
		notEngine[n] = true
	}
	var exprs []string
	add := func(rf RuleFile) {
		for _, g := range rf.Groups {
			for _, r := range g.Rules {
				exprs = append(exprs, r.Expr)
				if r.Record != "" {
					notEngine[r.Record] = true
				}
			}
		}
	}
	add(rules)
	slo, err := SLORules(SLOInput{TTFT: 0.5, ITL: 0.05, E2E: 10})
	if err != nil {
		t.Fatal(err)
	}
	add(slo)
	files, err := Dashboards(in)
	if err != nil {
		t.Fatal(err)
	}
	for _, raw := range files {
		dexprs, _, windows := grafanaStrings(t, raw)
		for _, e := range dexprs {
			exprs = append(exprs, grafanaToPromQL(e, windows)...)
		}
	}
	read := engineSeriesRead(t, notEngine, exprs)
	// What ptdmon's TSDB source and the adapters read: every family of
	// every table, histograms as their three series.
	read = append(read, engine.KnownNames()...)
	if len(read) < 40 {
		t.Fatalf("only %d engine series read: %v", len(read), read)
	}
	for _, n := range read {
		if !keep.MatchString(n) && !keep.MatchString(n+"_bucket") {
			t.Errorf("%s is read but dropped by the keep-list", n)
		}
	}
	for _, n := range []string{"toy:done_total", "done_total", "toy:active", "toy:ttft_seconds_bucket",
		"ttft_seconds_count", "toy:link_kib_sum", "toy:link_kib_count"} {
		if !keep.MatchString(n) {
			t.Errorf("registered engine's %s is dropped", n)
		}
	}
	// Series a vLLM server exposes that nothing reads.
	for _, n := range []string{"vllm:request_success_created", "vllm:request_max_num_generation_tokens_bucket",
		"vllm:request_params_n_bucket", "python_gc_objects_collected_total", "process_resident_memory_bytes",
		"vllm:lora_requests_info", "vllm:request_success_total_x", "xvllm:request_success_total"} {
		if keep.MatchString(n) {
			t.Errorf("%s is kept, though nothing reads it", n)
		}
	}
}
