package gen

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"text/template"

	"go.yaml.in/yaml/v3"

	"github.com/prometheus/prometheus/promql/parser"
	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/ledger"
)

// promtool returns the path of promtool. In CI it must be there (the
// workflow installs it); elsewhere its absence skips the test.
func promtool(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("promtool not found but CI is set: install prometheus (apt-get install -y prometheus): %v", err)
		}
		t.Skip("promtool not installed")
	}
	return p
}

func runPromtool(t *testing.T, bin string, args ...string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// Rule sets the unit tests in testdata run against.
var ruleInputs = map[string]Input{
	"rules.yml": {KVBytesPerRequest: 1 << 20, Targets: []engine.Target{
		{Name: "ld0", URL: "http://10.0.0.9:8000", Role: engine.Decode, Engine: engine.VLLM, Labels: map[string]string{ledger.LabelMaxNumSeqs: "32"}},
		{Name: "ld1", URL: "http://10.0.0.10:8000", Role: engine.Decode, Engine: engine.VLLM}, // no batch limit: no constant
	}},
	"rules_nokv.yml":  {},
	"rules_pools.yml": {KVBytesPerRequest: 1 << 20, PoolKVBytes: map[string]int64{"llama": 1 << 20, "chat": 1 << 19}},
}

func writeRules(t *testing.T, dir string) {
	t.Helper()
	for name, in := range ruleInputs {
		b, err := Rules(in).YAML()
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestPromtoolCheck(t *testing.T) {
	bin := promtool(t)
	dir := t.TempDir()
	writeRules(t, dir)
	for name := range ruleInputs {
		runPromtool(t, bin, "check", "rules", filepath.Join(dir, name))
	}
	in := Input{
		Targets: []engine.Target{
			{Name: "vllm-p0", URL: "http://10.0.0.1:8000/metrics", Role: "prefill", Engine: "vllm", Labels: map[string]string{"cluster": "a"}},
			{Name: "sglang-d0", URL: "https://10.0.0.2:30000", Role: "decode", Engine: "sglang"},
			{Name: "trt-p0", URL: "http://10.0.0.3:8000", Role: "prefill", Engine: "trtllm"},
		},
		FileSD:    []string{"sd/*.json"},
		RuleFiles: []string{"rules.yml"},
	}
	cfg, err := PrometheusConfig(in)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(p, cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	runPromtool(t, bin, "check", "config", p)
}

// TestPromtoolUnit runs the hand-written unit tests in testdata against
// freshly generated rules.
func TestPromtoolUnit(t *testing.T) {
	bin := promtool(t)
	dir := t.TempDir()
	writeRules(t, dir)
	for _, f := range []string{"rules_test.yml", "rules_nokv_test.yml", "failure_alerts_test.yml", "rules_pools_test.yml", "shed_test.yml", "utilisation_test.yml"} {
		t.Run(f, func(t *testing.T) {
			doc := loadUnitTests(t, f)
			ruleFile := doc["rule_files"].([]any)[0].(string)
			fillAnnotations(t, doc, alertsByName(Rules(ruleInputs[ruleFile])))
			b, err := yaml.Marshal(doc)
			if err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(dir, f)
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
			runPromtool(t, bin, "test", "rules", p)
		})
	}
}

func loadUnitTests(t *testing.T, name string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return doc
}

func alertsByName(f RuleFile) map[string]Rule {
	out := map[string]Rule{}
	for _, g := range f.Groups {
		for _, r := range g.Rules {
			if r.Alert != "" {
				out[r.Alert] = r
			}
		}
	}
	return out
}

// renderAnnotation expands an annotation the way Prometheus does: Go
// templates with $labels bound to the alert's labels.
func renderAnnotation(text string, labels map[string]string) (string, error) {
	tmpl, err := template.New("a").Option("missingkey=zero").Parse("{{$labels := .Labels}}{{$value := .Value}}" + text)
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	err = tmpl.Execute(&b, struct {
		Labels map[string]string
		Value  float64
	}{labels, 0})
	return b.String(), err
}

// fillAnnotations sets every expected alert's annotations, so the test
// files state labels (what matters) and stay readable.
func fillAnnotations(t *testing.T, doc map[string]any, alerts map[string]Rule) {
	t.Helper()
	for _, tc := range doc["tests"].([]any) {
		art, _ := tc.(map[string]any)["alert_rule_test"].([]any)
		for _, a := range art {
			am := a.(map[string]any)
			rule, ok := alerts[am["alertname"].(string)]
			if !ok {
				t.Fatalf("unit test names unknown alert %v", am["alertname"])
			}
			exp, _ := am["exp_alerts"].([]any)
			for _, e := range exp {
				em := e.(map[string]any)
				labels := map[string]string{}
				for k, v := range em["exp_labels"].(map[string]any) {
					labels[k] = v.(string)
				}
				ann := map[string]any{}
				for k, text := range rule.Annotations {
					s, err := renderAnnotation(text, labels)
					if err != nil {
						t.Fatalf("%s annotation %s: %v", rule.Alert, k, err)
					}
					ann[k] = s
				}
				em["exp_annotations"] = ann
			}
		}
	}
}

func TestRenderAnnotation(t *testing.T) {
	tests := []struct {
		text   string
		labels map[string]string
		want   string
	}{
		{"{{ or $labels.target $labels.ptd_target $labels.instance }} ({{ $labels.job }}) is not being scraped",
			map[string]string{"ptd_target": "vd0", "job": "ptdmon-engines", "instance": "h:1"}, "vd0 (ptdmon-engines) is not being scraped"},
		{"{{ or $labels.target $labels.ptd_target $labels.instance }}",
			map[string]string{"instance": "h:1"}, "h:1"},
	}
	for _, tt := range tests {
		got, err := renderAnnotation(tt.text, tt.labels)
		if err != nil || got != tt.want {
			t.Errorf("renderAnnotation(%q) = %q, %v; want %q", tt.text, got, err, tt.want)
		}
	}
}

// TestUnitTestsCoverEveryRule fails when a rule has no unit test: every
// recording rule (name and static labels) must appear among the expected
// samples, and every alert must be expected to fire somewhere.
func TestUnitTestsCoverEveryRule(t *testing.T) {
	type sample struct {
		name   string
		labels map[string]string
	}
	var samples []sample
	fired := map[string]bool{}
	for _, f := range []string{"rules_test.yml", "rules_nokv_test.yml", "failure_alerts_test.yml", "rules_pools_test.yml", "shed_test.yml", "utilisation_test.yml"} {
		doc := loadUnitTests(t, f)
		for _, tc := range doc["tests"].([]any) {
			m := tc.(map[string]any)
			pet, _ := m["promql_expr_test"].([]any)
			for _, p := range pet {
				exp, _ := p.(map[string]any)["exp_samples"].([]any)
				for _, e := range exp {
					ls, err := parser.NewParser(parser.Options{}).ParseMetric(e.(map[string]any)["labels"].(string))
					if err != nil {
						t.Fatalf("%s: %v", f, err)
					}
					s := sample{name: ls.Get("__name__"), labels: ls.Map()}
					samples = append(samples, s)
				}
			}
			art, _ := m["alert_rule_test"].([]any)
			for _, a := range art {
				am := a.(map[string]any)
				if exp, _ := am["exp_alerts"].([]any); len(exp) > 0 {
					fired[am["alertname"].(string)] = true
				}
			}
		}
	}
	for _, g := range Rules(ruleInputs["rules.yml"]).Groups {
		for _, r := range g.Rules {
			if r.Alert != "" {
				if !fired[r.Alert] {
					t.Errorf("alert %s is never expected to fire in testdata", r.Alert)
				}
				continue
			}
			covered := false
			for _, s := range samples {
				if s.name != r.Record {
					continue
				}
				match := true
				for k, v := range r.Labels {
					if s.labels[k] != v {
						match = false
					}
				}
				covered = covered || match
			}
			if !covered {
				t.Errorf("recording rule %s %v has no expected sample in testdata", r.Record, r.Labels)
			}
		}
	}
}
