package config

import (
	"strings"
	"testing"

	"github.com/ptdmon/ptdmon/internal/ledger"
)

// max_num_seqs reaches each target as the batch-limit label the ledger
// reads: the pool's where it sets one, else the deployment's; a label the
// target gives itself wins; a bad value is an error at its line.
func TestMaxNumSeqs(t *testing.T) {
	c, err := Parse([]byte(`
max_num_seqs: 256
pools:
  chat: {max_num_seqs: 64}
  code: {kv_bytes_per_request: 1073741824}
targets:
  - {name: d0, url: http://10.0.0.1:8000/metrics, role: decode, pool: chat}
  - {name: d1, url: http://10.0.0.2:8000/metrics, role: decode, pool: code}
  - {name: d2, url: http://10.0.0.3:8000/metrics, role: decode}
  - {name: d3, url: http://10.0.0.4:8000/metrics, role: decode, pool: chat, labels: {ptd_max_num_seqs: "32"}}
`), "ptdmon.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c.SetDefaults()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"64", "256", "256", "32"} {
		if got := c.ResolveTarget(c.Targets[i]).Labels[ledger.LabelMaxNumSeqs]; got != want {
			t.Errorf("%s: max_num_seqs %q, want %q", c.Targets[i].Name, got, want)
		}
	}
	if reqs, err := c.PoolRequests(); err != nil || len(reqs) != 1 {
		t.Errorf("pool requests %v, %v: a pool with only max_num_seqs has no B_request of its own", reqs, err)
	}

	f := func(yaml, want string) {
		t.Helper()
		c, err := Parse([]byte(yaml), "ptdmon.yaml")
		if err == nil {
			c.SetDefaults()
			err = c.Validate()
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", yaml, err, want)
		}
	}
	f("max_num_seqs: -1\n", "ptdmon.yaml:1: max_num_seqs must be positive")
	f("pools:\n  chat: {max_num_seqs: -4}\n", "max_num_seqs must be positive")
	f("pools:\n  chat: {}\n", "set kv_bytes_per_request or model.config (or max_num_seqs)")
}
