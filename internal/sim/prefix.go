package sim

import "fmt"

// PrefixHitSpec makes a share of a group's requests hit the prefix cache of
// the decode instance that takes them: their KV transfer moves only the
// prompt's uncached part (docs/sim.md#prefix-hits).
//
// vLLM's KV connectors read only what the decode side lacks: its scheduler
// asks the connector for len(prompt_token_ids) − num_computed_tokens tokens,
// num_computed_tokens being the decode instance's own prefix-cache hit, and
// NixlConnector pulls only the blocks without a cache hash
// (blocks.get_unhashed_block_ids(); a full hit pulls nothing), see
// https://github.com/vllm-project/vllm/blob/0f120751344c09af442c1800020908d2b7ff71f2/vllm/distributed/kv_transfer/kv_connector/v1/nixl_connector.py
// (get_num_new_matched_tokens, update_state_after_alloc). So a hit on a
// Cached share of the prompt moves (1 − Cached) × B_request, and each such
// transfer still counts one. The simulator applies the same to every
// connector it models; the prefill side still computes the whole prompt
// (its own prefix cache is not modelled), so prefill capacity is unchanged.
type PrefixHitSpec struct {
	// Fraction of the group's requests that hit, in [0, 1].
	Fraction float64 `yaml:"fraction" json:"fraction,omitempty"`
	// Cached is the share of a hit request's prompt the decode instance
	// holds already, in [0, 1); 0 means DefaultPrefixCached.
	Cached float64 `yaml:"cached" json:"cached,omitempty"`
}

// DefaultPrefixCached is the prompt share a hit covers when not given: a
// shared system prompt and conversation history of half the prompt.
const DefaultPrefixCached = 0.5

// cached is the share of the prompt a hit covers.
func (p PrefixHitSpec) cached() float64 {
	if p.Cached == 0 {
		return DefaultPrefixCached
	}
	return p.Cached
}

func (p PrefixHitSpec) validate() error {
	if !(p.Fraction >= 0 && p.Fraction <= 1) {
		return fmt.Errorf("fraction must be within [0, 1], got %g", p.Fraction)
	}
	if !(p.Cached >= 0 && p.Cached < 1) {
		return fmt.Errorf("cached must be within [0, 1), got %g", p.Cached)
	}
	return nil
}

// TransferBytes is the bytes one request's KV transfer moves: B_request, or
// its uncached part for a request that hit the prefix cache.
func (g Group) TransferBytes(sc Scenario, hit bool) int64 {
	b := g.BytesPerRequest(sc)
	if !hit {
		return b
	}
	return int64(float64(b) * (1 - g.PrefixHit.cached()))
}

// MeanTransferBytes is the bytes of the average transfer:
// B_request × (1 − fraction × cached). KV bytes ÷ B_request is then that
// share of the requests transferred, not a request count.
func (g Group) MeanTransferBytes(sc Scenario) float64 {
	hit, miss := float64(g.TransferBytes(sc, true)), float64(g.TransferBytes(sc, false))
	f := g.PrefixHit.Fraction
	return f*hit + (1-f)*miss
}
