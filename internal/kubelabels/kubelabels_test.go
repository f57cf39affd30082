package kubelabels

import "testing"

// TestDiscoveryLabels: pod labels and annotations are named as Prometheus'
// pod role names them, every character outside [a-zA-Z0-9_] an underscore.
func TestDiscoveryLabels(t *testing.T) {
	f := func(got, want string) {
		t.Helper()
		if got != want {
			t.Errorf("%s, want %s", got, want)
		}
	}
	f(PodLabel("ptdmon.io/role"), "__meta_kubernetes_pod_label_ptdmon_io_role")
	f(PodLabel("app"), "__meta_kubernetes_pod_label_app")
	f(PodLabelPresent("llm-d.ai/role"), "__meta_kubernetes_pod_labelpresent_llm_d_ai_role")
	f(PodAnnotation("prometheus.io/port"), "__meta_kubernetes_pod_annotation_prometheus_io_port")
	f(PodLabel("leaderworkerset.sigs.k8s.io/worker-index"), "__meta_kubernetes_pod_label_leaderworkerset_sigs_k8s_io_worker_index")
}

// TestStepsOverride: ptdmon's own labels are set after every stack's, and
// the filters come last, so an override is never undone.
func TestStepsOverride(t *testing.T) {
	steps := Steps()
	lastStack, firstOwn, firstFilter := -1, -1, -1
	for i, s := range steps {
		switch {
		case s.Action == "keep" || s.Action == "drop":
			if firstFilter < 0 {
				firstFilter = i
			}
		case s.Why == "ptdmon":
			if firstOwn < 0 {
				firstOwn = i
			}
		default:
			lastStack = i
		}
	}
	if !(lastStack < firstOwn && firstOwn < firstFilter) || steps[len(steps)-1].Target != "" || steps[len(steps)-1].Source[0] != serves {
		t.Errorf("order: last stack step %d, first own %d, first filter %d", lastStack, firstOwn, firstFilter)
	}
}
