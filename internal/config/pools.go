package config

import (
	"fmt"
	"sort"
	"strconv"

	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/kvsize"
	"github.com/ptdmon/ptdmon/internal/ledger"
)

// PoolConfig is one pool's entry in ptdmon.yaml's pools (docs/pools.md):
// its B_request, given in bytes or computed from its model's config.json,
// as kv_bytes_per_request and model do for a deployment of one pool.
type PoolConfig struct {
	KVBytesPerRequest int64       `yaml:"kv_bytes_per_request"`
	Model             ModelConfig `yaml:"model"`
	// MaxNumSeqs is the pool's decode batch limit (Config.MaxNumSeqs).
	MaxNumSeqs int `yaml:"max_num_seqs"`
}

// hasRequest says the pool sets its own B_request.
func (p PoolConfig) hasRequest() bool { return p.KVBytesPerRequest != 0 || p.Model.Config != "" }

// validatePools checks every pool's B_request settings.
func (c *Config) validatePools(where string) []error {
	var errs []error
	for _, name := range sortedPools(c.Pools) {
		p := c.Pools[name]
		bad := func(format string, a ...any) {
			errs = append(errs, fmt.Errorf("%s: pools: %s: %s", where, name, fmt.Sprintf(format, a...)))
		}
		switch {
		case name == "":
			bad("a pool needs a name")
		case p.KVBytesPerRequest < 0:
			bad("kv_bytes_per_request must be positive")
		case p.KVBytesPerRequest > 0 && p.Model.Config != "":
			bad("set kv_bytes_per_request or model.config, not both")
		case p.Model.Config != "" && p.Model.SeqLen <= 0:
			bad("model.seq_len must be > 0 when model.config is set")
		case p.MaxNumSeqs < 0:
			bad("max_num_seqs must be positive")
		case !p.hasRequest() && p.MaxNumSeqs == 0:
			bad("set kv_bytes_per_request or model.config (or max_num_seqs)")
		}
	}
	return errs
}

// PoolRequests settles every pool's B_request (nil when no pool is
// configured); a model config that cannot be read is an error naming the
// pool.
func (c *Config) PoolRequests() (map[string]kvsize.Request, error) {
	if len(c.Pools) == 0 {
		return nil, nil
	}
	out := make(map[string]kvsize.Request, len(c.Pools))
	for _, name := range sortedPools(c.Pools) {
		p := c.Pools[name]
		if !p.hasRequest() {
			continue // a pool that sets only its batch limit
		}
		r, err := kvsize.Resolve(p.KVBytesPerRequest, kvsize.BasisConfig, p.Model.Config, kvsize.Options{
			SeqLen: p.Model.SeqLen, KVDtype: p.Model.KVDtype, TP: p.Model.TP, WindowMode: p.Model.WindowMode,
		})
		if err != nil {
			return nil, fmt.Errorf("pools: %s: %w", name, err)
		}
		out[name] = r
	}
	return out, nil
}

func sortedPools(m map[string]PoolConfig) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// poolLabels is the target's labels with its pool as the ptd_pool label,
// which the ledger and the generated scrape configuration read.
func (t Target) poolLabels() map[string]string {
	if t.Pool == "" {
		return t.Labels
	}
	out := make(map[string]string, len(t.Labels)+1)
	for k, v := range t.Labels {
		out[k] = v
	}
	out[ledger.LabelPool] = t.Pool
	return out
}

// ResolveTarget is t.Resolve with the batch limit of its pool (or of the
// deployment) as the ledger.LabelMaxNumSeqs label, unless the target's
// labels give one.
func (c *Config) ResolveTarget(t Target) engine.Target {
	r := t.Resolve()
	if _, set := r.Labels[ledger.LabelMaxNumSeqs]; set {
		return r
	}
	n := c.MaxNumSeqs
	if pool, labelled := ledger.PoolName(r.Labels, ""); labelled && c.Pools[pool].MaxNumSeqs > 0 {
		n = c.Pools[pool].MaxNumSeqs
	}
	if n <= 0 {
		return r
	}
	labels := make(map[string]string, len(r.Labels)+1)
	for k, v := range r.Labels {
		labels[k] = v
	}
	labels[ledger.LabelMaxNumSeqs] = strconv.Itoa(n)
	r.Labels = labels
	return r
}
