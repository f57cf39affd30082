package config

import (
	"strings"
	"testing"
)

// TestKubernetesSD: the kubernetes_sd section is parsed and checked, each
// error naming the file and the line of its key; it counts as a source of
// targets.
func TestKubernetesSD(t *testing.T) {
	f := func(yaml, wantErr string) {
		t.Helper()
		c, err := Parse([]byte(yaml), "ptdmon.yaml")
		if err == nil {
			c.SetDefaults()
			err = c.Validate()
		}
		switch {
		case wantErr == "" && err != nil:
			t.Errorf("%q: %v", yaml, err)
		case wantErr != "" && (err == nil || !strings.Contains(err.Error(), wantErr)):
			t.Errorf("%q: error %v, want one containing %q", yaml, err, wantErr)
		}
	}
	f("kubernetes_sd: {}\n", "")
	f("kubernetes_sd:\n  namespaces: [llm-d, dynamo]\n  label_selector: llm-d.ai/inferenceServing=true\n", "")
	f("interval: 1s\nkubernetes_sd:\n  namespace: [llm-d]\n", "ptdmon.yaml:3: field namespace not found in kubernetes_sd")
	f("kubernetes_sd:\n  own_namespace: true\n  namespaces:\n    - llm-d\n    - LLM_D\n", `ptdmon.yaml:3: kubernetes_sd.namespaces: "LLM_D" is not a namespace name`)
	f("kubernetes_sd:\n  namespaces: [a, a]\n", `ptdmon.yaml:2: kubernetes_sd.namespaces: "a" is listed twice`)
	f("kubernetes_sd:\n  kubeconfig: /home/me/.kube/config\n  own_namespace: true\n", "ptdmon.yaml:3: kubernetes_sd.own_namespace is the namespace of the pod")
	f("kubernetes_sd:\n  namespaces: 3\n", "ptdmon.yaml:2:")
	f("source: prometheus=http://p:9090\nkubernetes_sd: {}\n", "remove targets, file_sd and kubernetes_sd")

	c, err := Parse([]byte("listen: 127.0.0.1:0\nkubernetes_sd:\n  namespaces: [b, a]\n  label_selector: x=y\n"), "ptdmon.yaml")
	if err != nil {
		t.Fatal(err)
	}
	sd := c.KubernetesSD
	if got := sd.At("label_selector"); got != "ptdmon.yaml:4" {
		t.Errorf("At(label_selector) = %q", got)
	}
	if got := sd.At("field_selector"); got != "ptdmon.yaml:3" {
		t.Errorf("At(field_selector), not given, = %q, want the section's line", got)
	}
	names, several := sd.WatchedNamespaces()
	if strings.Join(names, ",") != "a,b" || !several {
		t.Errorf("WatchedNamespaces = %v, %v", names, several)
	}
}
