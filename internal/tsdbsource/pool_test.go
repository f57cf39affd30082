package tsdbsource

import (
	"testing"

	"github.com/ptdmon/ptdmon/internal/ledger"
)

// TestPoolLabel: the ptd_pool label on a target's series names its pool in
// the ledger, over the model its exposition names.
func TestPoolLabel(t *testing.T) {
	r := newRig(t)
	a := engineLabels("p0", "prefill", "vllm", ledger.LabelPool, "chat")
	done := func(i int) (float64, bool) { return float64(3 * i), true }
	one := func(int) (float64, bool) { return 1, true }
	r.fake.mu.Lock()
	r.fake.series = []fakeSeries{
		{with(a, "__name__", "up"), one},
		{with(a, "__name__", "vllm:request_success_total", "finished_reason", "stop", "model_name", "meta-llama/Llama-3.1-8B"), done},
	}
	r.fake.mu.Unlock()
	for i := 0; i < 4; i++ {
		r.step()
	}
	m := r.l.Meta()["p0"]
	if m.Pool != "chat" || !m.PoolLabelled || m.Model != "meta-llama/Llama-3.1-8B" {
		t.Errorf("p0 meta %+v: want pool chat by its label, model from the exposition", m)
	}
}
