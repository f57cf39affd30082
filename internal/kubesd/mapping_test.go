package kubesd

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
	apiv1 "k8s.io/api/core/v1"

	"github.com/ptdmon/ptdmon/internal/config"
)

// fixture is one entry of testdata/pods.yaml.
type fixture struct {
	Name        string            `yaml:"name"`
	Source      string            `yaml:"source"`
	Labels      map[string]string `yaml:"labels"`
	Annotations map[string]string `yaml:"annotations"`
	Ports       []struct {
		Name string `yaml:"name"`
		Port int32  `yaml:"port"`
	} `yaml:"ports"`
	Want *struct {
		Role, Engine, Pool, Path, Scheme string
		Port                             int
	} `yaml:"want"`
}

func loadFixtures(t *testing.T) []fixture {
	t.Helper()
	data, err := os.ReadFile("testdata/pods.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var fs []fixture
	if err := yaml.Unmarshal(data, &fs); err != nil {
		t.Fatal(err)
	}
	return fs
}

// TestStackLabels: every pod of testdata/pods.yaml, created Ready in a fake
// API server and found through Prometheus' pod discoverer, becomes the
// target its entry wants, or none.
func TestStackLabels(t *testing.T) {
	fs := loadFixtures(t)
	var pods []pod
	var want []string
	for i, f := range fs {
		if f.Source == "" {
			t.Errorf("%s: no source", f.Name)
		}
		ip := fmt.Sprintf("10.1.0.%d", i+1)
		p := pod{name: f.Name, ip: ip, labels: f.Labels, annotations: f.Annotations, ready: true}
		for _, pt := range f.Ports {
			p.ports = append(p.ports, apiv1.ContainerPort{Name: pt.Name, ContainerPort: pt.Port, Protocol: apiv1.ProtocolTCP})
		}
		pods = append(pods, p)
		if w := f.Want; w != nil {
			path, scheme := w.Path, w.Scheme
			if path == "" {
				path = "/metrics"
			}
			if scheme == "" {
				scheme = "http"
			}
			want = append(want, show([]config.Target{{Name: f.Name, URL: fmt.Sprintf("%s://%s:%d%s", scheme, ip, w.Port, path), Role: w.Role, Engine: w.Engine, Pool: w.Pool}}))
		}
	}
	sort.Strings(want)
	w := startWatch(t, &config.KubernetesSD{Namespaces: []string{"serving"}}, []string{"serving"}, pods...)
	w.wait(t, strings.Join(want, ""))
}
