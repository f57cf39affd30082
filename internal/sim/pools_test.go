package sim

import (
	"strings"
	"testing"

	"github.com/ptdmon/ptdmon/internal/config"
)

// TestPoolsInPtdmonYAML: a group serving its own model exports that model
// and moves its own B_request, and the ptdmon.yaml the simulator writes
// gives ptdmon that pool's B_request.
func TestPoolsInPtdmonYAML(t *testing.T) {
	sc := baseScenario()
	g := sc.Groups[0]
	g.Name, g.Model, g.KVBytesPerRequest = "qwen", "Qwen/Qwen2.5-7B-Instruct", LlamaKVBytes/2
	sc.Groups = append(sc.Groups, g)
	c, _ := startFake(t, sc)
	cfg, err := config.Parse([]byte(c.PtdmonYAML(4)), "sim.yaml")
	if err != nil {
		t.Fatal(err)
	}
	reqs, err := cfg.PoolRequests()
	if err != nil {
		t.Fatal(err)
	}
	if len(reqs) != 1 || reqs[g.Model].Bytes != LlamaKVBytes/2 {
		t.Errorf("pools %v: want %s with %d bytes only", reqs, g.Model, LlamaKVBytes/2)
	}
	if got := g.BytesPerRequest(sc); got != LlamaKVBytes/2 {
		t.Errorf("group B_request %d", got)
	}
	if got := sc.Groups[0].ModelOf(sc); got != sc.Model {
		t.Errorf("first group's model %q, want the scenario's %q", got, sc.Model)
	}
	qwen := 0
	for _, in := range c.model.Instances() {
		body, _, err := c.model.Exposition(in.Name, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := sc.Model
		if strings.HasPrefix(in.Name, "qwen-") {
			want = g.Model
			qwen++
		}
		if !strings.Contains(string(body), `model_name="`+want+`"`) {
			t.Errorf("%s does not export model %q", in.Name, want)
		}
	}
	if qwen == 0 {
		t.Error("no instance of the qwen group")
	}
}
