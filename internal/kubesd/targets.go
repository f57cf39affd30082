package kubesd

import (
	"fmt"
	"net"
	"sort"
	"strings"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/discovery/targetgroup"
	promlabels "github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/relabel"

	"github.com/ptdmon/ptdmon/internal/config"
	"github.com/ptdmon/ptdmon/internal/kubelabels"
)

// The discovery labels of Prometheus' pod role that are read here.
const (
	podName       = "__meta_kubernetes_pod_name"
	podNamespace  = "__meta_kubernetes_namespace"
	podReady      = "__meta_kubernetes_pod_ready"
	podPhase      = "__meta_kubernetes_pod_phase"
	podIP         = "__meta_kubernetes_pod_ip"
	portName      = "__meta_kubernetes_pod_container_port_name"
	portNumber    = "__meta_kubernetes_pod_container_port_number"
	portProtocol  = "__meta_kubernetes_pod_container_port_protocol"
	containerInit = "__meta_kubernetes_pod_container_init"
)

// Skipped is a pod the discovery saw and did not make a target, and why.
type Skipped struct{ Pod, Reason string }

var steps = compile(func() []kubelabels.Step { return kubelabels.Steps() })

// compile turns the mapping into Prometheus relabel configs; the steps are
// constants of this program, so a step that does not compile is a bug.
func compile(of func() []kubelabels.Step) []*relabel.Config {
	var out []*relabel.Config
	for _, s := range of() {
		out = append(out, relabelConfig(s))
	}
	return out
}

func relabelConfig(s kubelabels.Step) *relabel.Config {
	c := relabel.DefaultRelabelConfig
	c.SourceLabels = nil
	for _, l := range s.Source {
		c.SourceLabels = append(c.SourceLabels, model.LabelName(l))
	}
	if s.Separator != "" {
		c.Separator = s.Separator
	}
	c.Regex = relabel.MustNewRegexp(s.Regex)
	c.TargetLabel = s.Target
	if s.Replacement != "" {
		c.Replacement = s.Replacement
	}
	if s.Action != "" {
		c.Action = relabel.Action(s.Action)
	}
	c.NameValidationScheme = model.LegacyValidation
	if err := c.Validate(model.LegacyValidation); err != nil {
		panic(fmt.Sprintf("kubelabels step %+v: %v", s, err))
	}
	return &c
}

// Targets turns the pods' target groups into serve's targets: Ready pods
// that the mapping keeps, one target each, at the port their annotations
// or port names give. Names are the pod's, namespace/pod when several
// namespaces are watched. The result is sorted by name.
func Targets(groups map[string]*targetgroup.Group, several bool) ([]config.Target, []Skipped) {
	var out []config.Target
	var skipped []Skipped
	for _, g := range groups {
		t, reason := target(g, several)
		if reason != "" {
			skipped = append(skipped, Skipped{Pod: podOf(g), Reason: reason})
			continue
		}
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	sort.Slice(skipped, func(i, j int) bool { return skipped[i].Pod < skipped[j].Pod })
	return out, skipped
}

func podOf(g *targetgroup.Group) string {
	return string(g.Labels[podNamespace]) + "/" + string(g.Labels[podName])
}

// target maps one pod; a non-empty reason says why it is not a target.
func target(g *targetgroup.Group, several bool) (config.Target, string) {
	if string(g.Labels[podReady]) != "true" || string(g.Labels[podPhase]) != string("Running") {
		return config.Target{}, "not Ready"
	}
	b := promlabels.NewBuilder(promlabels.EmptyLabels())
	for k, v := range g.Labels {
		b.Set(string(k), string(v))
	}
	if !relabel.ProcessBuilder(b, steps...) {
		return config.Target{}, "not an engine or router of a known stack (no ptdmon.io/role), or a LeaderWorkerSet worker"
	}
	pod := b.Labels()
	addr, reason := address(g, pod)
	if reason != "" {
		return config.Target{}, reason
	}
	engine := pod.Get(kubelabels.Engine)
	path := pod.Get(kubelabels.AnnotationPath)
	if path == "" {
		path = "/metrics"
		if engine == "trtllm" {
			// As the generated scrape configuration: TensorRT-LLM's
			// Prometheus text is not at /metrics.
			path = "/prometheus/metrics"
		}
	}
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	scheme := pod.Get(kubelabels.AnnotationScheme)
	if scheme == "" {
		scheme = "http"
	}
	name := pod.Get(podName)
	ns := pod.Get(podNamespace)
	if several {
		name = ns + "/" + name
	}
	t := config.Target{
		Name:      name,
		URL:       scheme + "://" + addr + path,
		Role:      pod.Get(kubelabels.Role),
		Engine:    engine,
		Pool:      pod.Get(kubelabels.Pool),
		Labels:    map[string]string{"namespace": ns},
		DefinedAt: "kubernetes_sd: pod " + ns + "/" + pod.Get(podName),
	}
	if err := t.Check(); err != nil {
		return config.Target{}, err.Error()
	}
	return t, ""
}

// address is host:port of the pod's metrics: the prometheus.io/port
// annotation's port, else the first of kubelabels.Ports the pod declares
// and that applies to it; as the generated PodMonitor's endpoints choose.
func address(g *targetgroup.Group, pod promlabels.Labels) (string, string) {
	ip := pod.Get(podIP)
	if p := pod.Get(kubelabels.AnnotationPort); p != "" {
		return net.JoinHostPort(ip, p), ""
	}
	byName := map[string]string{}
	for _, t := range g.Targets {
		if string(t[containerInit]) == "true" || t[portNumber] == "" {
			continue
		}
		if proto := string(t[portProtocol]); proto != "" && proto != "TCP" {
			continue
		}
		if n := string(t[portName]); n != "" {
			if _, dup := byName[n]; !dup {
				byName[n] = string(t[model.AddressLabel])
			}
		}
	}
	var names []string
	for _, p := range kubelabels.Ports() {
		names = append(names, p.Name)
		addr, ok := byName[p.Name]
		if !ok {
			continue
		}
		if p.Only == nil || relabel.ProcessBuilder(promlabels.NewBuilder(pod), relabelConfig(*p.Only)) {
			return addr, ""
		}
	}
	return "", "no prometheus.io/port annotation and no container port named " + strings.Join(names, ", ") + " (for its stack)"
}
