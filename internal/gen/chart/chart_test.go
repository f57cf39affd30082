package chart

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/common/util"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/engine"

	"github.com/ptdmon/ptdmon/internal/config"
)

const chartDir = "../../../deploy/helm/ptdmon"

type object = map[string]any

// render renders the chart with values as `helm template` does, in the
// namespace llm-d, and returns its objects by kind/name.
func render(t *testing.T, c *chartv2.Chart, values string) (map[string]object, error) {
	t.Helper()
	var vals map[string]any
	if err := yaml.Unmarshal([]byte(values), &vals); err != nil {
		t.Fatal(err)
	}
	if vals == nil {
		vals = map[string]any{}
	}
	rv, err := util.ToRenderValues(c, vals, common.ReleaseOptions{Name: "ptdmon", Namespace: "llm-d", IsInstall: true}, nil)
	if err != nil {
		return nil, err
	}
	files, err := engine.Render(c, rv)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	objs := map[string]object{}
	for _, name := range names {
		if strings.HasSuffix(name, ".tpl") {
			continue
		}
		dec := yaml.NewDecoder(strings.NewReader(files[name]))
		for {
			var o object
			err := dec.Decode(&o)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v\n%s", name, err, files[name])
			}
			if o == nil {
				continue
			}
			key := o["kind"].(string) + "/" + dig(o, "metadata", "name").(string)
			if _, dup := objs[key]; dup {
				t.Fatalf("%s twice", key)
			}
			objs[key] = o
		}
	}
	return objs, nil
}

// dig walks maps and lists; nil when a step is missing.
func dig(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[k]
		case int:
			l, ok := v.([]any)
			if !ok || k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

func kinds(objs map[string]object) string {
	var ks []string
	for k := range objs {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return strings.Join(ks, " ")
}

// TestRender renders the chart with Helm in several value sets and checks
// what each makes: the objects, a ptdmon.yaml that ptdmon accepts, RBAC
// that only reads pods, a non-root pod, the monitors and rules of gen, the
// dashboards labelled for Grafana's sidecar; and that every object is
// valid against the Kubernetes OpenAPI schemas (schema_test.go).
func TestRender(t *testing.T) {
	c, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	always := "ConfigMap/ptdmon ConfigMap/ptdmon-ptdmon-instance ConfigMap/ptdmon-ptdmon-overview Deployment/ptdmon Service/ptdmon ServiceAccount/ptdmon"
	f := func(name, values, wantKinds string, check func(t *testing.T, objs map[string]object, cfg *config.Config)) {
		t.Run(name, func(t *testing.T) {
			objs, err := render(t, c, values)
			if err != nil {
				t.Fatal(err)
			}
			want := strings.Fields(wantKinds)
			sort.Strings(want)
			if got := kinds(objs); got != strings.Join(want, " ") {
				t.Errorf("objects:\n%s\nwant:\n%s", got, strings.Join(want, " "))
			}
			cm := objs["ConfigMap/ptdmon"]
			text, _ := dig(cm, "data", "ptdmon.yaml").(string)
			cfg, err := config.Parse([]byte(text), "ptdmon.yaml")
			if err != nil {
				t.Fatalf("%v\n%s", err, text)
			}
			cfg.SetDefaults()
			if err := cfg.Validate(); err != nil {
				t.Errorf("the chart's ptdmon.yaml: %v\n%s", err, text)
			}
			dep := objs["Deployment/ptdmon"]
			if dig(dep, "spec", "template", "spec", "securityContext", "runAsNonRoot") != true {
				t.Error("the pod may run as root")
			}
			if dig(dep, "spec", "template", "spec", "serviceAccountName") != "ptdmon" {
				t.Error("the pod does not run as the chart's service account")
			}
			for k, o := range objs {
				if strings.HasSuffix(k, "Role") {
					rules, _ := json.Marshal(o["rules"])
					if string(rules) != `[{"apiGroups":[""],"resources":["pods"],"verbs":["get","list","watch"]}]` {
						t.Errorf("%s may do more than read pods: %s", k, rules)
					}
				}
				if strings.HasPrefix(k, "ConfigMap/ptdmon-ptdmon-") {
					if dig(o, "metadata", "labels", "grafana_dashboard") != "1" {
						t.Errorf("%s is not labelled grafana_dashboard: \"1\"", k)
					}
					for file, body := range o["data"].(map[string]any) {
						want, err := os.ReadFile(filepath.Join(chartDir, "dashboards", file))
						if err != nil || strings.TrimSpace(body.(string)) != strings.TrimSpace(string(want)) || !json.Valid([]byte(body.(string))) {
							t.Errorf("%s: %s is not the chart's dashboard (%v)", k, file, err)
						}
					}
				}
			}
			validate(t, objs)
			if check != nil {
				check(t, objs, cfg)
			}
		})
	}
	f("defaults", "", always+" Role/ptdmon-discovery RoleBinding/ptdmon-discovery", func(t *testing.T, objs map[string]object, cfg *config.Config) {
		if cfg.KubernetesSD == nil || strings.Join(cfg.KubernetesSD.Namespaces, ",") != "llm-d" {
			t.Errorf("kubernetes_sd %+v: want the release's namespace", cfg.KubernetesSD)
		}
		if cfg.Record.Dir != "" {
			t.Error("records by default")
		}
	})
	f("cluster-wide, monitors, rules, recording", `
discovery: {clusterWide: true, namespaces: [llm-d, dynamo], labelSelector: "llm-d.ai/inferenceServing=true"}
serviceMonitor: {enabled: true}
podMonitor: {enabled: true, labels: {release: prom}}
prometheusRule: {enabled: true}
record: {enabled: true, persistence: {storageClass: fast}}
config: {window: 10s, kv_bytes_per_request: 2684354560}
image: {repository: registry.example/ptdmon, tag: v1}
`, always+" ClusterRole/ptdmon-discovery ClusterRoleBinding/ptdmon-discovery PersistentVolumeClaim/ptdmon-record PodMonitor/ptdmon-engines PrometheusRule/ptdmon ServiceMonitor/ptdmon",
		func(t *testing.T, objs map[string]object, cfg *config.Config) {
			sd := cfg.KubernetesSD
			if sd == nil || strings.Join(sd.Namespaces, ",") != "llm-d,dynamo" || sd.LabelSelector != "llm-d.ai/inferenceServing=true" {
				t.Errorf("kubernetes_sd %+v", sd)
			}
			if cfg.Record.Dir == "" || cfg.Window.String() != "10s" || cfg.KVBytesPerRequest != 2684354560 {
				t.Errorf("record %+v, window %v, kv %d", cfg.Record, cfg.Window, cfg.KVBytesPerRequest)
			}
			if dig(objs["PodMonitor/ptdmon-engines"], "metadata", "labels", "release") != "prom" {
				t.Error("the PodMonitor lacks the release label of the values")
			}
			if dig(objs["ServiceMonitor/ptdmon"], "metadata", "labels", "release") != "kube-prometheus-stack" {
				t.Error("the ServiceMonitor lacks kube-prometheus-stack's release label")
			}
			dep := objs["Deployment/ptdmon"]
			if dig(dep, "spec", "template", "spec", "containers", 0, "image") != "registry.example/ptdmon:v1" {
				t.Error("image of the values not used")
			}
			if dig(dep, "spec", "template", "spec", "volumes", 1, "persistentVolumeClaim", "claimName") != "ptdmon-record" ||
				dig(dep, "spec", "template", "spec", "containers", 0, "volumeMounts", 1, "mountPath") != "/var/lib/ptdmon" {
				t.Error("the recording's volume is not mounted")
			}
			if dig(objs["PersistentVolumeClaim/ptdmon-record"], "spec", "storageClassName") != "fast" {
				t.Error("storage class of the values not used")
			}
			checkGenerated(t, objs)
		})
	f("tsdb mode, no dashboards", `
mode: tsdb
tsdb: {url: "http://prometheus-operated.monitoring:9090"}
dashboards: {enabled: false}
podMonitor: {enabled: true}
prometheusRule: {enabled: true}
`, "ConfigMap/ptdmon Deployment/ptdmon PodMonitor/ptdmon-engines PrometheusRule/ptdmon Service/ptdmon ServiceAccount/ptdmon",
		func(t *testing.T, objs map[string]object, cfg *config.Config) {
			if cfg.Source != "prometheus=http://prometheus-operated.monitoring:9090" || cfg.KubernetesSD != nil {
				t.Errorf("source %q, kubernetes_sd %+v", cfg.Source, cfg.KubernetesSD)
			}
		})

	if _, err := render(t, c, "mode: scrape\n"); err == nil || !strings.Contains(err.Error(), `mode "scrape": want collector or tsdb`) {
		t.Errorf("mode scrape: %v", err)
	}
}

// checkGenerated: the chart's PodMonitor and PrometheusRule are deploy/k8s'
// (what gen writes from the same builders), and promtool accepts the rules.
func checkGenerated(t *testing.T, objs map[string]object) {
	t.Helper()
	k8s := map[string]object{}
	for _, file := range []string{"engines-podmonitor.yaml", "ptdmon-rules.yaml"} {
		b, err := os.ReadFile(filepath.Join("../../../deploy/k8s", file))
		if err != nil {
			t.Fatal(err)
		}
		var o object
		if err := yaml.Unmarshal(b, &o); err != nil {
			t.Fatal(err)
		}
		k8s[o["kind"].(string)] = o
	}
	if !reflect.DeepEqual(objs["PodMonitor/ptdmon-engines"]["spec"], k8s["PodMonitor"]["spec"]) {
		t.Error("the chart's PodMonitor differs from deploy/k8s/engines-podmonitor.yaml")
	}
	rules := objs["PrometheusRule/ptdmon"]["spec"]
	if !reflect.DeepEqual(rules, k8s["PrometheusRule"]["spec"]) {
		t.Error("the chart's PrometheusRule differs from deploy/k8s/ptdmon-rules.yaml")
	}
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("promtool not found but CI is set: install prometheus: %v", err)
		}
		t.Skip("promtool not installed")
	}
	b, err := yaml.Marshal(rules)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "rules.yaml")
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd := exec.Command(promtool, "check", "rules", file)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Errorf("promtool check rules: %v\n%s", err, out.String())
	}
	t.Logf("promtool check rules: %s", strings.TrimSpace(out.String()))
}
