package kubesd

import (
	"testing"

	"github.com/ptdmon/ptdmon/internal/config"
)

// TestPodLifecycle drives pods through what a cluster does to them: a pod
// that is created is not a target until it is Ready; relabelling it
// changes its role; deleting it drops it (it is not reported down); a
// rollout replaces old pods with new ones; a pod in a namespace not
// watched is never seen, nor one the label selector leaves out.
func TestPodLifecycle(t *testing.T) {
	sd := &config.KubernetesSD{Namespaces: []string{"serving"}, LabelSelector: "llm-d.ai/inferenceServing=true"}
	prefill := func(name, ip string, ready bool) pod {
		return pod{name: name, ip: ip, ready: ready, ports: []apiPort{port("metrics", 8000)},
			labels: map[string]string{"llm-d.ai/inferenceServing": "true", "llm-d.ai/role": "prefill", "llm-d.ai/model": "chat"}}
	}
	other := prefill("elsewhere", "10.9.0.1", true)
	other.ns = "batch"
	// The selector is the API server's to apply; the fake one applies it to
	// lists only, so this pod is there before the first list.
	unselected := prefill("unselected", "10.0.0.9", true)
	unselected.labels = map[string]string{"llm-d.ai/role": "prefill"}
	w := startWatch(t, sd, []string{"serving"}, other, unselected)
	w.waitUpdates(t, 1)
	w.create(t, prefill("p-1", "10.0.0.1", false))
	w.wait(t, "")

	w.update(t, prefill("p-1", "10.0.0.1", true))
	w.wait(t, "p-1 http://10.0.0.1:8000/metrics role=prefill engine= pool=chat\n")

	relabelled := prefill("p-1", "10.0.0.1", true)
	relabelled.labels = map[string]string{"llm-d.ai/inferenceServing": "true", "llm-d.ai/role": "decode", "llm-d.ai/model": "chat"}
	w.update(t, relabelled)
	w.wait(t, "p-1 http://10.0.0.1:8000/metrics role=decode engine= pool=chat\n")

	w.remove(t, "serving", "p-1")
	w.wait(t, "")

	// A rollout with surge: the new pods come up beside the old ones, each
	// old one turns un-Ready and is deleted once a new one is Ready.
	w.create(t, prefill("old-a", "10.0.1.1", true))
	w.create(t, prefill("old-b", "10.0.1.2", true))
	w.wait(t, "old-a http://10.0.1.1:8000/metrics role=prefill engine= pool=chat\n"+
		"old-b http://10.0.1.2:8000/metrics role=prefill engine= pool=chat\n")
	w.create(t, prefill("new-a", "10.0.2.1", false))
	w.update(t, prefill("new-a", "10.0.2.1", true))
	w.update(t, prefill("old-a", "10.0.1.1", false))
	w.wait(t, "new-a http://10.0.2.1:8000/metrics role=prefill engine= pool=chat\n"+
		"old-b http://10.0.1.2:8000/metrics role=prefill engine= pool=chat\n")
	w.remove(t, "serving", "old-a")
	w.create(t, prefill("new-b", "10.0.2.2", true))
	w.remove(t, "serving", "old-b")
	w.wait(t, "new-a http://10.0.2.1:8000/metrics role=prefill engine= pool=chat\n"+
		"new-b http://10.0.2.2:8000/metrics role=prefill engine= pool=chat\n")
}

// TestSeveralNamespaces: with every namespace watched, pods of the same
// name in two namespaces are two targets, named namespace/pod.
func TestSeveralNamespaces(t *testing.T) {
	a := pod{ns: "team-a", name: "decode-0", ip: "10.0.0.1", ready: true, ports: []apiPort{port("metrics", 8000)}, labels: map[string]string{"ptdmon.io/role": "decode"}}
	b := a
	b.ns, b.ip = "team-b", "10.0.0.2"
	w := startWatch(t, &config.KubernetesSD{}, []string{""}, a, b)
	w.wait(t, "team-a/decode-0 http://10.0.0.1:8000/metrics role=decode engine= pool=\n"+
		"team-b/decode-0 http://10.0.0.2:8000/metrics role=decode engine= pool=\n")
}
