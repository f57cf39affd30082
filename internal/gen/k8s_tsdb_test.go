package gen

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/ptdmon/ptdmon/internal/config"
	"github.com/ptdmon/ptdmon/internal/tsdbsource"
)

// k8sDocs reads every document of a checked-in manifest file.
func k8sDocs(t *testing.T, name string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(deployDir, "k8s", name))
	if err != nil {
		t.Fatal(err)
	}
	return decodeAll(t, name, b)
}

func byKind(t *testing.T, docs []map[string]any, kind string) map[string]any {
	t.Helper()
	for _, d := range docs {
		if d["kind"] == kind {
			return d
		}
	}
	t.Fatalf("no %s", kind)
	return nil
}

// TestK8sTSDBModeMatchesRulesAndLabels checks deploy/k8s/tsdb against the
// rest of deploy/k8s: ptdmon in TSDB mode reads the same window and
// B_request as the PrometheusRule records, finds its targets by the labels
// the PodMonitor writes, and is not scraped by ptdmon's ServiceMonitor.
func TestK8sTSDBModeMatchesRulesAndLabels(t *testing.T) {
	tsdb := k8sDocs(t, "tsdb/ptdmon-tsdb.yaml")
	cm := byKind(t, tsdb, "ConfigMap")
	cfg, err := config.Parse([]byte(get(cm, "data", "ptdmon.yaml").(string)), "ptdmon-tsdb-config")
	if err != nil {
		t.Fatal(err)
	}
	cfg.SetDefaults()
	if err := cfg.Validate(); err != nil {
		t.Fatalf("TSDB-mode ptdmon.yaml does not validate: %v", err)
	}
	if _, base, err := config.ParseSource(cfg.Source); err != nil || base != K8sPrometheusURL {
		t.Errorf("source %q: want prometheus=%s", cfg.Source, K8sPrometheusURL)
	}

	// The rules: same window (their names carry it) and same B_request.
	rule := byKind(t, k8sDocs(t, "ptdmon-rules.yaml"), "PrometheusRule")
	n := RecordNames(promDuration(cfg.Window.Duration))
	var stageRecorded bool
	var engineB int64
	vec := regexp.MustCompile(`^vector\((\d+)\)$`)
	for _, g := range get(rule, "spec", "groups").([]any) {
		for _, r := range get(g, "rules").([]any) {
			rec, _ := get(r, "record").(string)
			if rec == n.Stage[1] {
				stageRecorded = true
			}
			if rec == n.KVRequestBytes && get(r, "labels", "path") == pathEngines {
				if m := vec.FindStringSubmatch(get(r, "expr").(string)); m != nil {
					engineB, _ = strconv.ParseInt(m[1], 10, 64)
				}
			}
		}
	}
	if !stageRecorded {
		t.Errorf("the PrometheusRule records no %s: TSDB-mode window %s differs from the rules'", n.Stage[1], cfg.Window)
	}
	if engineB != cfg.KVBytesPerRequest {
		t.Errorf("B_request: rules %d, TSDB-mode ptdmon %d", engineB, cfg.KVBytesPerRequest)
	}

	// The PodMonitor writes the labels the TSDB source discovers targets by.
	pm := byKind(t, k8sDocs(t, "engines-podmonitor.yaml"), "PodMonitor")
	written := map[string]bool{}
	for _, r := range get(pm, "spec", "podMetricsEndpoints", 0, "relabelings").([]any) {
		if l, ok := get(r, "targetLabel").(string); ok {
			written[l] = true
		}
	}
	for _, l := range []string{tsdbsource.LabelTarget, tsdbsource.LabelRole, tsdbsource.LabelEngine} {
		if !written[l] {
			t.Errorf("the PodMonitor does not write %s, which TSDB-mode ptdmon reads targets from", l)
		}
	}

	// Deployment: mounts its ConfigMap, runs serve with it; the Service
	// selects its pods; ptdmon's ServiceMonitor does not select the Service.
	dep := byKind(t, tsdb, "Deployment")
	if got := get(dep, "spec", "template", "spec", "volumes", 0, "configMap", "name"); got != get(cm, "metadata", "name") {
		t.Errorf("Deployment mounts ConfigMap %v, the ConfigMap is %v", got, get(cm, "metadata", "name"))
	}
	podLabels := get(dep, "spec", "template", "metadata", "labels").(map[string]any)
	svc := byKind(t, tsdb, "Service")
	for k, v := range get(svc, "spec", "selector").(map[string]any) {
		if podLabels[k] != v {
			t.Errorf("Service selector %s=%v does not match the pods' labels %v", k, v, podLabels)
		}
	}
	sm := byKind(t, k8sDocs(t, "ptdmon.yaml"), "ServiceMonitor")
	svcLabels := get(svc, "metadata", "labels").(map[string]any)
	selects := true
	for k, v := range get(sm, "spec", "selector", "matchLabels").(map[string]any) {
		if svcLabels[k] != v {
			selects = false
		}
	}
	if selects {
		t.Error("ptdmon's ServiceMonitor selects the TSDB-mode Service: its stages would be recorded twice")
	}
}
