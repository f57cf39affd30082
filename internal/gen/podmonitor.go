package gen

import (
	"go.yaml.in/yaml/v3"

	"github.com/ptdmon/ptdmon/internal/kubelabels"
)

// DefaultRelease is the release label the PodMonitor, ServiceMonitor and
// PrometheusRule carry by default: kube-prometheus-stack's Prometheus
// selects monitors and rules by the label release with its Helm release's
// name, which its documentation installs as "kube-prometheus-stack".
const DefaultRelease = "kube-prometheus-stack"

// monitorMeta is the metadata of a monitor or rule: ptdmon's labels and the
// release label, when there is one.
func monitorMeta(name, release string) *yaml.Node {
	labels := om("app.kubernetes.io/name", k8sApp, "app.kubernetes.io/part-of", k8sApp)
	if release != "" {
		labels = om("app.kubernetes.io/name", k8sApp, "app.kubernetes.io/part-of", k8sApp, "release", release)
	}
	return om("name", name, "labels", labels)
}

// relabeling is a kubelabels step in the Prometheus Operator's spelling.
func relabeling(s kubelabels.Step) *yaml.Node {
	pairs := []any{"sourceLabels", s.Source}
	if s.Separator != "" && s.Separator != ";" || len(s.Source) > 1 {
		pairs = append(pairs, "separator", s.Separator)
	}
	pairs = append(pairs, "regex", s.Regex)
	if s.Target != "" {
		pairs = append(pairs, "targetLabel", s.Target)
	}
	if s.Replacement != "" && s.Replacement != "$1" {
		pairs = append(pairs, "replacement", s.Replacement)
	}
	if s.Action != "" && s.Action != "replace" {
		pairs = append(pairs, "action", s.Action)
	}
	return om(pairs...)
}

// engineRelabelings are every endpoint's steps once its port is chosen:
// the target's name, the stacks' labels mapped to ptd_role, ptd_engine and
// ptd_pool (internal/kubelabels, the same steps ptdmon's kubernetes_sd
// applies), and the path and scheme of the pod's annotations or
// TensorRT-LLM's path.
func engineRelabelings(first ...*yaml.Node) *yaml.Node {
	out := seq(first...)
	out.Content = append(out.Content, om("sourceLabels", []string{"__meta_kubernetes_pod_name"}, "targetLabel", labelTarget))
	for _, s := range kubelabels.Steps() {
		out.Content = append(out.Content, relabeling(s))
	}
	out.Content = append(out.Content,
		om("sourceLabels", []string{kubelabels.AnnotationPath}, "regex", "(.+)", "targetLabel", "__metrics_path__"),
		om("sourceLabels", []string{kubelabels.AnnotationScheme}, "regex", "(https?)", "targetLabel", "__scheme__"),
		om("sourceLabels", []string{labelEngine, "__metrics_path__"}, "separator", ";", "regex", "trtllm;/metrics",
			"targetLabel", "__metrics_path__", "replacement", trtllmMetricsPath),
	)
	return out
}

// enginesPodMonitor scrapes every engine and router pod of the namespace
// that the stacks' labels or ptdmon's own name, at the port ptdmon's
// kubernetes_sd would read: the prometheus.io/port annotation's (an
// endpoint without a port, one target per pod), else the first port name
// of kubelabels.Ports that applies (one endpoint each).
func enginesPodMonitor(release string) *yaml.Node {
	endpoint := func(port string, relabelings *yaml.Node) *yaml.Node {
		pairs := []any{}
		if port != "" {
			pairs = append(pairs, "port", port)
		}
		pairs = append(pairs,
			"interval", "1s",
			"scrapeTimeout", "900ms",
			"relabelings", relabelings,
			"metricRelabelings", seq(om("sourceLabels", []string{"__name__"}, "regex", keepRegex(), "action", "keep")),
		)
		return om(pairs...)
	}
	// Every container port of the pod is a target here, all rewritten to
	// the same address: without their container label they are one
	// target, which Prometheus scrapes once.
	annotated := engineRelabelings(
		om("sourceLabels", []string{kubelabels.AnnotationPort}, "regex", "[0-9]+", "action", "keep"),
		om("sourceLabels", []string{"__meta_kubernetes_pod_ip", kubelabels.AnnotationPort}, "separator", ";", "regex", "(.+);(.+)",
			"targetLabel", "__address__", "replacement", "$1:$2"),
		om("regex", "container", "action", "labeldrop"),
	)
	endpoints := seq(endpoint("", annotated))
	for _, p := range kubelabels.Ports() {
		first := []*yaml.Node{om("sourceLabels", []string{kubelabels.AnnotationPort}, "regex", ".+", "action", "drop")}
		if p.Only != nil {
			first = append(first, relabeling(*p.Only))
		}
		endpoints.Content = append(endpoints.Content, endpoint(p.Name, engineRelabelings(first...)))
	}
	return om("apiVersion", "monitoring.coreos.com/v1", "kind", "PodMonitor", "metadata", monitorMeta("ptdmon-engines", release),
		"spec", om(
			// Every pod of the namespace: the relabelings keep the engines
			// and routers.
			"selector", om(),
			"podMetricsEndpoints", endpoints,
		))
}
