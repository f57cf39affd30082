package gen

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
	"go.yaml.in/yaml/v3"

	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/parse"
	"github.com/ptdmon/ptdmon/internal/sim"
)

// TestAlertsOnSimulatedCells feeds the engines' own expositions, as the
// simulator renders them second by second, to promtool as the series
// Prometheus would have scraped (with the ptd_* target labels the generated
// scrape config adds), and checks that the alerts naming a stage fire
// where the simulator's load model puts the bottleneck, and stay silent
// elsewhere: the same cells the verdict (internal/diagnose) gets right.
func TestAlertsOnSimulatedCells(t *testing.T) {
	bin := promtool(t)
	base := func(name string, g sim.Group) sim.Scenario {
		return sim.Scenario{Name: name, Model: "m", InputTokens: 8192, OutputTokens: 256,
			KVBytesPerRequest: sim.LlamaKVBytes, StopFraction: 0.3, Groups: []sim.Group{g}}
	}
	group := func(conn string, rate float64) sim.Group {
		return sim.Group{Name: "vllm", Engine: string(engine.VLLM), Connector: conn, Rate: rate,
			Prefill:  sim.PrefillSpec{Instances: 2, DP: 1, TokensPerSec: 24576, MaxBatch: 4, KVSlots: 60},
			Transfer: sim.TransferSpec{BandwidthBytesPerSec: 8 * float64(1<<30), Threads: 4},
			Decode:   sim.DecodeSpec{Instances: 2, DP: 1, StepTime: 25 * time.Millisecond, MaxBatch: 32, KVSlots: 60}}
	}
	cells := []struct {
		name  string
		sc    sim.Scenario
		fires []string // stage alerts expected at the end (alert or alert/role); the others must be silent
	}{
		{"balanced FlagCX", base("balanced", group(sim.ConnectorFlagCX, 3.6)), nil},
		{"KV-bound FlagCX", func() sim.Scenario {
			g := group(sim.ConnectorFlagCX, 3.75)
			g.Transfer.BandwidthBytesPerSec = 1.5 * float64(1<<30)
			return base("kv", g)
		}(), []string{"PTDKVTransferLagging"}},
		{"decode-bound NIXL (pull-gated KV)", func() sim.Scenario {
			g := group(sim.ConnectorNIXL, 3.75)
			g.Decode.MaxBatch, g.Decode.StepTime = 8, 20833*time.Microsecond
			return base("decode", g)
		}(), []string{"PTDDecodeLagging", "PTDQueueGrowing/decode"}},
		{"prefill-bound NIXL", func() sim.Scenario {
			g := group(sim.ConnectorNIXL, 7.5)
			g.Decode.Instances = 4
			return base("prefill", g)
		}(), []string{"PTDQueueGrowing/prefill"}},
	}
	stageAlerts := []string{"PTDKVTransferLagging", "PTDDecodeLagging", "PTDQueueGrowing"}
	rules := Rules(Input{KVBytesPerRequest: sim.LlamaKVBytes})
	used := ruleMetricNames(t, rules)
	dir := t.TempDir()
	b, err := rules.YAML()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "rules.yml"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	const secs = 240
	// The alert group runs every alertInterval: check at its last evaluation.
	step, err := time.ParseDuration(alertInterval)
	if err != nil {
		t.Fatal(err)
	}
	at := fmt.Sprintf("%ds", (secs-1)/int(step.Seconds())*int(step.Seconds()))
	var tests []map[string]any
	for i, c := range cells {
		if got := c.sc.LoadModel().Bottleneck; (got == sim.StageNone) != (len(c.fires) == 0) {
			t.Fatalf("%s: the load model says %s", c.name, got)
		}
		series := simulatedSeries(t, c.sc, int64(i+1), secs, used)
		var in []map[string]any
		for _, s := range series {
			in = append(in, map[string]any{"series": s.name, "values": s.values})
		}
		var art []map[string]any
		for _, a := range stageAlerts {
			exp := []map[string]any{}
			for _, f := range c.fires {
				if name, role, _ := strings.Cut(f, "/"); name == a {
					exp = append(exp, map[string]any{"exp_labels": expectedLabels(a, role)})
				}
			}
			if len(exp) == 0 {
				art = append(art, map[string]any{"eval_time": at, "alertname": a})
				continue
			}
			art = append(art, map[string]any{"eval_time": at, "alertname": a, "exp_alerts": exp})
		}
		tests = append(tests, map[string]any{"name": c.name, "interval": "1s", "input_series": in, "alert_rule_test": art})
	}
	doc := map[string]any{"rule_files": []string{"rules.yml"}, "evaluation_interval": "1s", "tests": tests}
	d := asAny(t, doc)
	fillAnnotations(t, d, alertsByName(rules))
	out, err := yaml.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "cells_test.yml")
	if err := os.WriteFile(p, out, 0o644); err != nil {
		t.Fatal(err)
	}
	runPromtool(t, bin, "test", "rules", p)
}

// asAny round-trips doc through YAML so that it has the shape of a loaded
// unit-test file ([]any, map[string]any), which fillAnnotations expects.
func asAny(t *testing.T, doc map[string]any) map[string]any {
	t.Helper()
	b, err := yaml.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := yaml.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// expectedLabels are the labels a stage alert carries on the engines path
// (role: the role of the waiting queue PTDQueueGrowing names).
func expectedLabels(alert, role string) map[string]string {
	if alert == "PTDQueueGrowing" {
		return map[string]string{"severity": "warning", "path": pathEngines, "pool": "m", "role": role, "queue": "waiting"}
	}
	return map[string]string{"severity": "warning", "path": pathEngines, "pool": "m", "model": "m"}
}

// ruleMetricNames lists the metric names the rules select.
func ruleMetricNames(t *testing.T, f RuleFile) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, g := range f.Groups {
		for _, r := range g.Rules {
			e, err := parser.NewParser(parser.Options{}).ParseExpr(r.Expr)
			if err != nil {
				t.Fatalf("%s%s: %v", r.Record, r.Alert, err)
			}
			parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
				if vs, ok := n.(*parser.VectorSelector); ok && vs.Name != "" {
					out[vs.Name] = true
				}
				return nil
			})
		}
	}
	return out
}

type promSeries struct {
	name   string
	values string
}

// simulatedSeries runs the scenario for secs seconds, scraping every
// instance once a second, and returns every sample of a metric in used as a
// promtool series ("_" where the scrape had no such sample).
func simulatedSeries(t *testing.T, sc sim.Scenario, seed int64, secs int, used map[string]bool) []promSeries {
	t.Helper()
	m, err := sim.NewModel(sc, seed, time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	vals := map[string][]string{}
	var p parse.Parser
	var ls labels.Labels
	for s := 0; s < secs; s++ {
		m.AdvanceTo(time.Duration(s) * time.Second)
		for _, in := range m.Instances() {
			body, f, err := m.Exposition(in.Name, nil)
			if err != nil {
				continue
			}
			err = p.Parse(body, f.ContentType(), func(x *parse.Sample) error {
				if !used[string(x.Name)] {
					return nil
				}
				p.Labels(&ls)
				b := labels.NewBuilder(ls)
				b.Set("job", "engines")
				b.Set("instance", in.Name+":8000")
				b.Set(labelTarget, in.Name)
				b.Set(labelRole, in.Role)
				b.Set("ptd_engine", in.Engine)
				b.Del(labels.MetricName)
				key := string(x.Name) + b.Labels().String()
				v := vals[key]
				for len(v) < s {
					v = append(v, "_")
				}
				vals[key] = append(v, strconv.FormatFloat(x.Value, 'g', -1, 64))
				return nil
			})
			if err != nil {
				t.Fatalf("%s at %d s: %v", in.Name, s, err)
			}
		}
	}
	keys := make([]string, 0, len(vals))
	for k := range vals {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]promSeries, 0, len(keys))
	for _, k := range keys {
		out = append(out, promSeries{name: k, values: strings.Join(vals[k], " ")})
	}
	return out
}
