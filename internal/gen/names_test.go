package gen

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/metrics"
)

var fqNameRE = regexp.MustCompile(`fqName: "([^"]+)"`)

// exportedNames are the families ptdmon's /metrics exposes, read from the
// collector's descriptors so a rename there breaks this test.
func exportedNames(t *testing.T) []string {
	t.Helper()
	ch := make(chan *prometheus.Desc, 64)
	go func() {
		(&metrics.Collector{}).Describe(ch)
		(&metrics.PoolCollector{}).Describe(ch)
		(&metrics.RouterCollector{}).Describe(ch)
		(&metrics.PhaseCollector{}).Describe(ch)
		(&metrics.AdviceCollector{}).Describe(ch)
		close(ch)
	}()
	var out []string
	for d := range ch {
		m := fqNameRE.FindStringSubmatch(d.String())
		if m == nil {
			t.Fatalf("cannot read the name of %s", d)
		}
		out = append(out, m[1])
	}
	if len(out) < 10 {
		t.Fatalf("only %d exported names found: %v", len(out), out)
	}
	return out
}

// knownNames is every metric name a generated query may use: what ptdmon
// exports, what the engine adapters read (histogram families with their
// _bucket/_sum/_count series), the recorded names, and Prometheus' own up.
type knownNames map[string]bool

func newKnownNames(t *testing.T, rules RuleFile) knownNames {
	k := knownNames{"up": true}
	for _, n := range exportedNames(t) {
		k[n] = true
	}
	for _, n := range engine.KnownNames() {
		k[n] = true
	}
	// The dashboards' SLO panel reads what `gen slo` records.
	slo, err := SLORules(SLOInput{TTFT: 0.5, ITL: 0.05, E2E: 10})
	if err != nil {
		t.Fatal(err)
	}
	for _, rf := range []RuleFile{rules, slo} {
		for _, g := range rf.Groups {
			for _, r := range g.Rules {
				if r.Record != "" {
					k[r.Record] = true
				}
			}
		}
	}
	return k
}

func (k knownNames) has(name string) bool {
	if k[name] {
		return true
	}
	for _, suf := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, suf); ok && k[base] {
			return true
		}
	}
	return false
}

// checkExpr parses a PromQL expression and checks each selector names a
// known metric.
func (k knownNames) checkExpr(expr string) error {
	e, err := parser.NewParser(parser.Options{}).ParseExpr(expr)
	if err != nil {
		return fmt.Errorf("parse %q: %w", expr, err)
	}
	var bad []string
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
		if name == "" {
			bad = append(bad, "selector without a metric name: "+vs.String())
		} else if !k.has(name) {
			bad = append(bad, "unknown metric "+name)
		}
		return nil
	})
	if len(bad) > 0 {
		return fmt.Errorf("%q: %s", expr, strings.Join(bad, "; "))
	}
	return nil
}

func TestRuleExpressionsUseKnownNames(t *testing.T) {
	for name, in := range map[string]Input{
		"default":     {KVBytesPerRequest: 1 << 30},
		"window 20s":  {Window: 20e9},
		"nixl only":   {KVSource: "nixl"},
		"window 1m30": {Window: 90e9},
	} {
		t.Run(name, func(t *testing.T) {
			rules := Rules(in)
			k := newKnownNames(t, rules)
			n := 0
			for _, g := range rules.Groups {
				for _, r := range g.Rules {
					n++
					if err := k.checkExpr(r.Expr); err != nil {
						t.Errorf("rule %s%s: %v", r.Record, r.Alert, err)
					}
				}
			}
			if n < 30 {
				t.Errorf("only %d rules", n)
			}
		})
	}
}

// TestCheckExprCatchesTypos makes sure the name check can fail.
func TestCheckExprCatchesTypos(t *testing.T) {
	k := newKnownNames(t, Rules(Input{}))
	tests := []struct {
		expr string
		ok   bool
	}{
		{`sum(rate(vllm:request_success_total[5s]))`, true},
		{`rate(vllm:nixl_bytes_transferred_sum[5s])`, true},
		{`histogram_quantile(0.9, sum by (le) (rate(sglang:time_to_first_token_seconds_bucket[1m])))`, true},
		{`stage:ptd_requests:rate5s`, true},
		{`ptd_requests_completed_total`, true},
		{`sum(rate(vllm:request_sucess_total[5s]))`, false}, //nolint:misspell // the misspelled name is the case
		{`stage:ptd_request:rate5s`, false},
		{`ptd_counter_resets_total`, false},
		{`rate({job="x"}[5s])`, false},
		{`rate(vllm:request_success_total[5s]`, false},
	}
	for _, tt := range tests {
		err := k.checkExpr(tt.expr)
		if (err == nil) != tt.ok {
			t.Errorf("checkExpr(%q) = %v, want ok=%v", tt.expr, err, tt.ok)
		}
	}
}

// grafanaStrings collects every "expr" of the dashboard JSON and the
// queries of its variables.
func grafanaStrings(t *testing.T, raw []byte) (exprs, varQueries []string, windows []string) {
	t.Helper()
	var d struct {
		Templating struct {
			List []struct {
				Name, Type string
				Query      any
			}
		}
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	for _, v := range d.Templating.List {
		q, _ := v.Query.(string)
		switch {
		case v.Type == "query":
			varQueries = append(varQueries, q)
		case v.Name == "window":
			for _, opt := range strings.Split(q, ",") {
				_, val, _ := strings.Cut(opt, " : ")
				windows = append(windows, strings.TrimSpace(val))
			}
		}
	}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for key, val := range x {
				if s, ok := val.(string); ok && key == "expr" {
					exprs = append(exprs, s)
				}
				walk(val)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	var all any
	if err := json.Unmarshal(raw, &all); err != nil {
		t.Fatal(err)
	}
	walk(all)
	sort.Strings(exprs)
	return exprs, varQueries, windows
}

var labelValuesRE = regexp.MustCompile(`^label_values\((.*),\s*[a-zA-Z_]+\)$`)

// grafanaToPromQL substitutes Grafana's variables the way Grafana would
// before sending a query: one expression per value of the window variable.
func grafanaToPromQL(expr string, windows []string) []string {
	var out []string
	vals := windows
	if !strings.Contains(expr, "${window}") {
		vals = []string{""}
	}
	for _, w := range vals {
		e := strings.ReplaceAll(expr, "${window}", w)
		e = strings.ReplaceAll(e, "$__rate_interval", "1m")
		e = regexp.MustCompile(`\$\{?[a-z_]+\}?`).ReplaceAllString(e, ".*")
		out = append(out, e)
	}
	return out
}

func TestDashboardQueriesUseKnownNames(t *testing.T) {
	for _, in := range []Input{{}, {Window: 20e9}} {
		k := newKnownNames(t, Rules(in))
		files, err := Dashboards(in)
		if err != nil {
			t.Fatal(err)
		}
		for name, raw := range files {
			exprs, vq, windows := grafanaStrings(t, raw)
			if len(windows) != 2 {
				t.Fatalf("%s: window variable values %v, want instant and windowed", name, windows)
			}
			if len(exprs) < 10 {
				t.Errorf("%s: only %d queries", name, len(exprs))
			}
			for _, q := range vq {
				m := labelValuesRE.FindStringSubmatch(q)
				if m == nil {
					t.Errorf("%s: variable query %q is not label_values(selector, label)", name, q)
					continue
				}
				exprs = append(exprs, m[1])
			}
			for _, e := range exprs {
				for _, p := range grafanaToPromQL(e, windows) {
					if err := k.checkExpr(p); err != nil {
						t.Errorf("%s: %v", name, err)
					}
				}
			}
		}
	}
}

// The engine rules are built from the adapters' tables: a newly registered
// engine shows up in them with its own names, rank and split labels,
// finish reasons and KV connector, and every generated name is known.
func TestRulesFollowAdapterTables(t *testing.T) {
	engine.Register(engine.Adapter{
		Engine: "toy", Display: "ToyLLM", Order: 99, Prefix: "toy:", ModelLabel: "model_name",
		RankLabels: []string{"tp"}, SplitLabels: []string{"lora"},
		FinishedLabel: "reason", NotCompleted: []engine.Reason{{Value: "cancel", Metric: engine.Aborted}},
		Families: []engine.Family{
			{Name: "toy:done_total", Type: "counter", Metric: engine.Completed, Finished: true},
			{Name: "toy:active", Type: "gauge", Metric: engine.Running},
		},
	})
	engine.RegisterConnector(engine.Connector{Source: "toylink", Engine: "toy", Order: 99, Families: []engine.Family{
		{Name: "toy:link_kib", Type: "histogram", Metric: engine.KVBytes, Sizes: true, Count: engine.KVTransfers, Scale: 1024},
	}})
	t.Cleanup(func() { engine.Unregister("toy") })

	rules := Rules(Input{})
	k := newKnownNames(t, rules)
	var all []string
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			if err := k.checkExpr(r.Expr); err != nil {
				t.Errorf("rule %s%s: %v", r.Record, r.Alert, err)
			}
			all = append(all, r.Expr)
		}
	}
	text := strings.Join(all, "\n")
	for _, want := range []string{
		`sum without (ptd_part, reason) (max without (tp) (last_over_time(toy:done_total{ptd_role!="", lora="", reason!="cancel"}[2s] offset 1s)))`,
		`max without (tp) (last_over_time(toy:active{ptd_role!="", lora=""}[2s]))`,
		`1024 * sum without (ptd_part, reason) (max without (tp) (last_over_time(toy:link_kib_sum{ptd_role!="", lora=""}[2s] offset 1s)))`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("rules lack %s", want)
		}
	}
}
