package kubesd

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/discovery/targetgroup"
	promlabels "github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/relabel"
	"go.yaml.in/yaml/v3"
	apiv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/ptdmon/ptdmon/internal/config"
)

// podMonitor is the part of a PodMonitor a Prometheus Operator turns into
// scrape configuration.
type podMonitor struct {
	Spec struct {
		Endpoints []struct {
			Port        string `yaml:"port"`
			Relabelings []struct {
				SourceLabels []string `yaml:"sourceLabels"`
				Separator    *string  `yaml:"separator"`
				Regex        string   `yaml:"regex"`
				TargetLabel  string   `yaml:"targetLabel"`
				Replacement  *string  `yaml:"replacement"`
				Action       string   `yaml:"action"`
			} `yaml:"relabelings"`
		} `yaml:"podMetricsEndpoints"`
	} `yaml:"spec"`
}

// TestPodMonitorAgrees: the generated PodMonitor (deploy/k8s, which
// internal/gen's TestDeployUpToDate keeps equal to the generator) makes of
// every pod of testdata/pods.yaml what kubernetes_sd makes of it: the same
// address, path, role, engine and pool, and no target where
// kubernetes_sd has none. Its endpoints are applied as the Prometheus
// Operator does: a named port keeps only that port's targets, the
// operator's own container label is added, then the relabelings.
func TestPodMonitorAgrees(t *testing.T) {
	data, err := os.ReadFile("../../deploy/k8s/engines-podmonitor.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var pm podMonitor
	if err := yaml.Unmarshal(data, &pm); err != nil {
		t.Fatal(err)
	}
	groups := discovered(t, fixturePods(t))
	mine, _ := Targets(groups, false)

	var scraped []string
	for _, g := range groups {
		seen := map[string]bool{}
		for _, ep := range pm.Spec.Endpoints {
			var cfgs []*relabel.Config
			for _, r := range ep.Relabelings {
				c := relabel.DefaultRelabelConfig
				c.SourceLabels = nil
				for _, l := range r.SourceLabels {
					c.SourceLabels = append(c.SourceLabels, model.LabelName(l))
				}
				if r.Separator != nil {
					c.Separator = *r.Separator
				}
				if r.Regex != "" {
					c.Regex = relabel.MustNewRegexp(r.Regex)
				}
				c.TargetLabel = r.TargetLabel
				if r.Replacement != nil {
					c.Replacement = *r.Replacement
				}
				if r.Action != "" {
					c.Action = relabel.Action(r.Action)
				}
				c.NameValidationScheme = model.LegacyValidation
				if err := c.Validate(model.LegacyValidation); err != nil {
					t.Fatalf("relabeling %+v: %v", r, err)
				}
				cfgs = append(cfgs, &c)
			}
			for _, tg := range g.Targets {
				if ep.Port != "" && string(tg[portName]) != ep.Port {
					continue
				}
				b := promlabels.NewBuilder(promlabels.EmptyLabels())
				for k, v := range g.Labels {
					b.Set(string(k), string(v))
				}
				for k, v := range tg {
					b.Set(string(k), string(v))
				}
				b.Set("__metrics_path__", "/metrics")
				b.Set("__scheme__", "http")
				b.Set("container", string(tg["__meta_kubernetes_pod_container_name"]))
				if !relabel.ProcessBuilder(b, cfgs...) {
					continue
				}
				l := b.Labels()
				s := fmt.Sprintf("%s %s://%s%s role=%s engine=%s pool=%s\n", l.Get("ptd_target"), l.Get("__scheme__"), l.Get("__address__"), l.Get("__metrics_path__"),
					l.Get("ptd_role"), l.Get("ptd_engine"), l.Get("ptd_pool"))
				// Prometheus scrapes identical targets once.
				if key := s + l.Get("container") + l.Get("endpoint"); !seen[key] {
					seen[key] = true
					scraped = append(scraped, s)
				}
			}
		}
	}
	sort.Strings(scraped)
	if got, want := strings.Join(scraped, ""), show(mine); got != want {
		t.Errorf("the PodMonitor scrapes:\n%s\nkubernetes_sd's targets:\n%s", got, want)
	}
	if len(mine) < 10 {
		t.Fatalf("only %d targets: the fixture was not read", len(mine))
	}
}

// fixturePods are testdata/pods.yaml's pods, Ready, each at its own address.
func fixturePods(t *testing.T) []pod {
	var pods []pod
	for i, f := range loadFixtures(t) {
		p := pod{name: f.Name, ip: fmt.Sprintf("10.1.0.%d", i+1), labels: f.Labels, annotations: f.Annotations, ready: true}
		for _, pt := range f.Ports {
			p.ports = append(p.ports, apiv1.ContainerPort{Name: pt.Name, ContainerPort: pt.Port, Protocol: apiv1.ProtocolTCP})
		}
		pods = append(pods, p)
	}
	return pods
}

// discovered is the target groups Prometheus' pod discoverer makes of pods.
func discovered(t *testing.T, pods []pod) map[string]*targetgroup.Group {
	t.Helper()
	client := fake.NewClientset()
	for _, p := range pods {
		o := p.object()
		if _, err := client.CoreV1().Pods(o.Namespace).Create(context.Background(), o, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch := make(chan []*targetgroup.Group)
	discover(ctx, &config.KubernetesSD{}, client, []string{"serving"}, ch, slog.New(slog.DiscardHandler))
	groups := map[string]*targetgroup.Group{}
	deadline := time.After(10 * time.Second)
	for len(groups) < len(pods) {
		select {
		case tgs := <-ch:
			put(groups, tgs)
		case <-deadline:
			t.Fatalf("%d of %d pods discovered", len(groups), len(pods))
		}
	}
	return groups
}
