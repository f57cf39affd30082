package kubesd

import (
	"strings"
	"testing"

	"github.com/ptdmon/ptdmon/internal/config"
)

// TestValidate: a selector Kubernetes would refuse is one error naming the
// file and line of its key.
func TestValidate(t *testing.T) {
	f := func(yaml, wantErr string) {
		t.Helper()
		c, err := config.Parse([]byte(yaml), "ptdmon.yaml")
		if err != nil {
			t.Fatal(err)
		}
		err = Validate(c.KubernetesSD)
		switch {
		case wantErr == "" && err != nil:
			t.Errorf("%q: %v", yaml, err)
		case wantErr != "" && (err == nil || !strings.HasPrefix(err.Error(), wantErr) || strings.Contains(err.Error(), "\n")):
			t.Errorf("%q: error %v, want one line starting %q", yaml, err, wantErr)
		}
	}
	f("kubernetes_sd:\n  label_selector: 'llm-d.ai/role in (prefill, decode),app!=redis'\n  field_selector: status.phase=Running\n", "")
	f("kubernetes_sd:\n  namespaces: [a]\n  label_selector: 'llm-d.ai/role in prefill'\n", `ptdmon.yaml:3: kubernetes_sd.label_selector "llm-d.ai/role in prefill": `)
	f("kubernetes_sd:\n  field_selector: 'status.phase'\n", `ptdmon.yaml:2: kubernetes_sd.field_selector "status.phase": `)
}
