package gen

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/ptdmon/ptdmon/internal/config"
	"github.com/ptdmon/ptdmon/internal/kubelabels"
)

func decodeAll(t *testing.T, name string, b []byte) []map[string]any {
	t.Helper()
	dec := yaml.NewDecoder(bytes.NewReader(b))
	var docs []map[string]any
	for {
		var d map[string]any
		err := dec.Decode(&d)
		if errors.Is(err, io.EOF) {
			return docs
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		docs = append(docs, d)
	}
}

// get walks a decoded YAML document by keys and indexes.
func get(v any, keys ...any) any {
	for _, k := range keys {
		switch k := k.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			s, _ := v.([]any)
			if k >= len(s) {
				return nil
			}
			v = s[k]
		}
	}
	return v
}

func TestComposeStructure(t *testing.T) {
	files := exampleDeploy(t)
	docs := decodeAll(t, "docker-compose.yml", files["compose/docker-compose.yml"])
	if len(docs) != 1 {
		t.Fatalf("%d documents", len(docs))
	}
	c := docs[0]
	for _, svc := range []string{"ptdmon", "prometheus", "grafana"} {
		if get(c, "services", svc) == nil {
			t.Fatalf("service %s missing", svc)
		}
	}
	// Every bind mount's source must be a generated file or directory, and
	// mounts map container paths to what the configs reference.
	mounts := map[string]string{} // container path -> deploy/ path
	for _, svc := range []string{"ptdmon", "prometheus", "grafana"} {
		vols, _ := get(c, "services", svc, "volumes").([]any)
		for _, v := range vols {
			parts := strings.Split(v.(string), ":")
			src := parts[0]
			if !strings.HasPrefix(src, ".") {
				if get(c, "volumes", src) == nil {
					t.Errorf("%s: named volume %s not declared", svc, src)
				}
				continue
			}
			rel := path.Clean(path.Join("compose", src))
			found := false
			for name := range files {
				if name == rel || strings.HasPrefix(name, rel+"/") {
					found = true
				}
			}
			if !found {
				t.Errorf("%s mounts %s, which the generator does not write", svc, src)
			}
			mounts[parts[1]] = rel
		}
	}
	if got := get(c, "services", "grafana", "environment", "GF_DASHBOARDS_MIN_REFRESH_INTERVAL"); got != "1s" {
		t.Errorf("Grafana min refresh interval = %v, want 1s (the dashboards offer a refresh every second)", got)
	}
	// The Prometheus the stack runs is the one the README says the rules
	// are tested in, and the one the tests run.
	img, _ := get(c, "services", "prometheus", "image").(string)
	minor := TestedPrometheus[:strings.LastIndex(TestedPrometheus, ".")]
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if img != "prom/prometheus:v"+TestedPrometheus || !strings.Contains(string(readme), "a real Prometheus "+minor) {
		t.Errorf("compose runs %s; the README names the tested Prometheus as %q: want both %s", img, "a real Prometheus "+minor, TestedPrometheus)
	}
	home := get(c, "services", "grafana", "environment", "GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH").(string)
	if _, ok := files[mounts[path.Dir(home)]+"/"+path.Base(home)]; !ok {
		t.Errorf("home dashboard %s is not a mounted generated dashboard", home)
	}
	var promCfg string
	for _, a := range get(c, "services", "prometheus", "command").([]any) {
		if v, ok := strings.CutPrefix(a.(string), "--config.file="); ok {
			promCfg = v
		}
	}
	if _, ok := files[mounts[path.Dir(promCfg)]+"/"+path.Base(promCfg)]; !ok {
		t.Errorf("prometheus --config.file=%s is not a mounted generated file", promCfg)
	}
	ptdCmd := get(c, "services", "ptdmon", "command").([]any)
	if ptdCmd[0] != "serve" || !strings.HasSuffix(ptdCmd[len(ptdCmd)-1].(string), ":"+ptdmonPort) {
		t.Errorf("ptdmon command %v", ptdCmd)
	}

	ds := decodeAll(t, "datasource", files["compose/grafana/provisioning/datasources/prometheus.yml"])[0]
	if got := get(ds, "datasources", 0, "jsonData", "timeInterval"); got != "1s" {
		t.Errorf("datasource timeInterval = %v, want 1s", got)
	}
	if got := get(ds, "datasources", 0, "url"); got != "http://prometheus:9090" {
		t.Errorf("datasource url = %v", got)
	}
	prov := decodeAll(t, "provider", files["compose/grafana/provisioning/dashboards/ptdmon-dashboards.yml"])[0]
	if p := get(prov, "providers", 0, "options", "path"); mounts[p.(string)] != "grafana/dashboards" {
		t.Errorf("dashboard provider path %v is not the mounted dashboards directory", p)
	}
	prom := decodeAll(t, "prometheus.yml", files["compose/prometheus/prometheus.yml"])[0]
	if got := get(prom, "scrape_configs", 0, "static_configs", 0, "targets", 0); got != "ptdmon:"+ptdmonPort {
		t.Errorf("Prometheus scrapes ptdmon at %v, want the compose service", got)
	}
	for _, rf := range get(prom, "rule_files").([]any) {
		if _, ok := files["compose/prometheus/"+rf.(string)]; !ok {
			t.Errorf("rule file %v not generated next to prometheus.yml", rf)
		}
	}
}

func TestComposePromtool(t *testing.T) {
	bin := promtool(t)
	dir := t.TempDir()
	for name, b := range exampleDeploy(t) {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	runPromtool(t, bin, "check", "config", filepath.Join(dir, "compose/prometheus/prometheus.yml"))
	// The PrometheusRule's spec is a rule file.
	docs := decodeAll(t, "ptdmon-rules.yaml", exampleDeploy(t)["k8s/ptdmon-rules.yaml"])
	spec, err := yaml.Marshal(docs[0]["spec"])
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "k8s-rules.yml")
	if err := os.WriteFile(p, spec, 0o644); err != nil {
		t.Fatal(err)
	}
	runPromtool(t, bin, "check", "rules", p)
}

func TestKubernetesStructure(t *testing.T) {
	files := exampleDeploy(t)
	byKind := map[string]map[string]any{}
	for _, f := range []string{"k8s/ptdmon.yaml", "k8s/engines-podmonitor.yaml", "k8s/ptdmon-rules.yaml"} {
		for _, d := range decodeAll(t, f, files[f]) {
			kind, _ := d["kind"].(string)
			if d["apiVersion"] == nil || kind == "" || get(d, "metadata", "name") == nil {
				t.Fatalf("%s: document without apiVersion, kind or name", f)
			}
			byKind[kind] = d
		}
	}
	for _, k := range []string{"ConfigMap", "Deployment", "Service", "ServiceMonitor", "PodMonitor", "PrometheusRule"} {
		if byKind[k] == nil {
			t.Fatalf("no %s", k)
		}
	}
	dep, svc, sm := byKind["Deployment"], byKind["Service"], byKind["ServiceMonitor"]
	podLabels := get(dep, "spec", "template", "metadata", "labels").(map[string]any)
	if !reflect.DeepEqual(get(dep, "spec", "selector", "matchLabels"), podLabels) {
		t.Error("Deployment selector does not match its pod template")
	}
	subset := func(sel, labels any) bool {
		for k, v := range sel.(map[string]any) {
			if labels.(map[string]any)[k] != v {
				return false
			}
		}
		return true
	}
	if !subset(get(svc, "spec", "selector"), podLabels) {
		t.Error("Service selector does not select the Deployment's pods")
	}
	if !subset(get(sm, "spec", "selector", "matchLabels"), get(svc, "metadata", "labels")) {
		t.Error("ServiceMonitor does not select the Service")
	}
	if get(sm, "spec", "endpoints", 0, "port") != get(svc, "spec", "ports", 0, "name") {
		t.Error("ServiceMonitor endpoint port is not the Service's port name")
	}
	if get(sm, "spec", "endpoints", 0, "interval") != "1s" {
		t.Error("ServiceMonitor interval is not 1s")
	}
	container := get(dep, "spec", "template", "spec", "containers", 0)
	if get(container, "ports", 0, "name") != get(svc, "spec", "ports", 0, "targetPort") {
		t.Error("Service targetPort is not the container's port name")
	}
	if get(dep, "spec", "template", "spec", "volumes", 0, "configMap", "name") != get(byKind["ConfigMap"], "metadata", "name") {
		t.Error("Deployment mounts another ConfigMap")
	}
	cfgText := get(byKind["ConfigMap"], "data", "ptdmon.yaml").(string)
	cfg, err := config.Parse([]byte(cfgText), "configmap")
	if err != nil {
		t.Fatal(err)
	}
	cfg.SetDefaults()
	if err := cfg.Validate(); err != nil {
		t.Errorf("ConfigMap's ptdmon.yaml: %v", err)
	}
	pm := byKind["PodMonitor"]
	relabel, _ := json.Marshal(get(pm, "spec", "podMetricsEndpoints", 0, "relabelings"))
	for _, want := range []string{kubelabels.PodLabel(k8sRoleLabel), kubelabels.PodLabel(k8sEngineLabel), `"targetLabel":"ptd_role"`, `"targetLabel":"ptd_engine"`, `"targetLabel":"ptd_target"`} {
		if !strings.Contains(string(relabel), want) {
			t.Errorf("PodMonitor relabelings lack %s", want)
		}
	}
	// The PrometheusRule carries exactly the generated rules.
	specYAML, _ := yaml.Marshal(byKind["PrometheusRule"]["spec"])
	var got RuleFile
	if err := yaml.Unmarshal(specYAML, &got); err != nil {
		t.Fatal(err)
	}
	if want := Rules(exampleInput(t)); !reflect.DeepEqual(got, want) {
		t.Error("PrometheusRule spec differs from Rules()")
	}
}
